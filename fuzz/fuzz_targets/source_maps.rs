//! Source maps and their original sources (`enrich::symbolicate`: the map reader, the
//! `mappings` decoder, source names from the JSON, `sourcesContent` texts, the original
//! source parse for function names). Any input is decoded as an inline map is and, when it
//! is read, probed at a few generated positions: it never panics, and what it names is a
//! source the map has.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first 12 bytes: four probes (a line byte, a little-endian column of 16 bits);
    // the rest: the map.
    if data.len() < 12 {
        return;
    }
    let (head, map) = data.split_at(12);
    let probes: Vec<(u32, u32)> = head
        .chunks(3)
        .map(|c| (u32::from(c[0]), u32::from(u16::from_le_bytes([c[1], c[2]]))))
        .collect();
    if let Ok(found) = taskchain::internals::symbolicate::probe_map(map, &probes) {
        assert_eq!(found.len(), probes.len());
    }
});

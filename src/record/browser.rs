//! Finding, starting and stopping Chromium. A started browser runs in a process group of
//! its own with a fresh profile folder; stopping it asks it to close, then kills the whole
//! group, reaps every process of it (this process is made their subreaper on Linux, so
//! none is left a zombie) and removes the profile folder. An interrupt does the same
//! ([`crate::output::on_interrupt`]). Nothing is ever downloaded.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The names looked for on `PATH`, in this order.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Where browsers are usually installed, looked at after `PATH`.
#[cfg(target_os = "macos")]
const LOCATIONS: &[&str] = &[
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
    "~/Applications/Chromium.app/Contents/MacOS/Chromium",
    "~/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];
#[cfg(windows)]
const LOCATIONS: &[&str] = &[
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files\Chromium\Application\chrome.exe",
];
#[cfg(not(any(target_os = "macos", windows)))]
const LOCATIONS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/usr/lib/chromium/chromium",
    "/opt/google/chrome/chrome",
    "/snap/bin/chromium",
];

/// Where a browser was looked for and what was found, in the order tried.
pub(crate) struct Search<'a> {
    /// `--browser PATH`.
    pub(crate) explicit: Option<&'a Path>,
    /// `CHROME_PATH`.
    pub(crate) chrome_path: Option<OsString>,
    /// `PATH`.
    pub(crate) path_var: Option<OsString>,
    /// The usual install locations (`~/` is the home folder).
    pub(crate) locations: &'a [&'a str],
}

impl Search<'_> {
    /// The search of this environment: `--browser`, `CHROME_PATH`, `PATH`, [`LOCATIONS`].
    pub(crate) fn of_env(explicit: Option<&Path>) -> Search<'_> {
        Search {
            explicit,
            chrome_path: std::env::var_os("CHROME_PATH").filter(|v| !v.is_empty()),
            path_var: std::env::var_os("PATH"),
            locations: LOCATIONS,
        }
    }

    /// The browser to start. Errors: `--browser` or `CHROME_PATH` names no program (they
    /// are not skipped: the user asked for that one), or nothing was found; the message
    /// says where it looked and how to point to a browser.
    pub(crate) fn find(&self) -> Result<PathBuf, String> {
        if let Some(p) = self.explicit {
            return program(p).ok_or_else(|| format!("--browser {}: no such program", p.display()));
        }
        if let Some(p) = &self.chrome_path {
            let p = Path::new(p);
            return program(p)
                .ok_or_else(|| format!("CHROME_PATH={}: no such program", p.display()));
        }
        let mut dirs = Vec::new();
        if let Some(path) = &self.path_var {
            dirs.extend(std::env::split_paths(path));
            for d in &dirs {
                for name in NAMES {
                    if let Some(p) = program(&d.join(exe(name))) {
                        return Ok(p);
                    }
                }
            }
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        for loc in self.locations {
            let p = match (loc.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                (Some(_), None) => continue,
                (None, _) => PathBuf::from(loc),
            };
            if let Some(p) = program(&p) {
                return Ok(p);
            }
        }
        Err(format!(
            "no Chrome or Chromium found: looked for {} on PATH{} and at {}; install one \
             (Debian: apt-get install chromium) or point to it with --browser PATH or \
             CHROME_PATH, or attach to a running one with --connect URL (nothing is downloaded)",
            NAMES.join(", "),
            if dirs.is_empty() {
                " (PATH is empty)".to_string()
            } else {
                format!(" ({} folders)", dirs.len())
            },
            self.locations.join(", ")
        ))
    }
}

fn exe(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

/// `p` when it is a file this user may run.
fn program(p: &Path) -> Option<PathBuf> {
    let m = std::fs::metadata(p).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if !m.is_file() || m.permissions().mode() & 0o111 == 0 {
            return None;
        }
    }
    #[cfg(not(unix))]
    if !m.is_file() {
        return None;
    }
    Some(p.to_path_buf())
}

/// How to start the browser.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    /// The program.
    pub(crate) program: PathBuf,
    /// Show its window (`--headed`).
    pub(crate) headed: bool,
    /// `--host-resolver-rules` for the browser; empty for none.
    pub(crate) host_rules: String,
    /// More flags (`--browser-arg`).
    pub(crate) extra: Vec<String>,
    /// How long to wait for its DevTools endpoint.
    pub(crate) timeout: Duration,
    /// Print notes (`--no-sandbox` as root).
    pub(crate) notes: bool,
}

/// A started browser: its process (the leader of its own process group), profile folder
/// and DevTools endpoint. Dropping it stops it ([`Browser::stop`]).
pub(crate) struct Browser {
    child: Option<Child>,
    profile: Option<tempfile::TempDir>,
    /// `ws://127.0.0.1:PORT/devtools/browser/ID`.
    pub(crate) ws_url: String,
    /// Key of its interrupt cleanup.
    cleanup: Option<u64>,
}

/// True when this process runs as root (Chromium's sandbox then refuses to start).
fn is_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    false
}

/// The flags every started browser gets: a fresh profile, DevTools on a free port, and
/// nothing that talks to the network by itself (background networking, component updates,
/// sync, QUIC) nor any first-run UI.
fn flags(l: &Launch, profile: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![
        "--remote-debugging-port=0".into(),
        {
            let mut s = OsString::from("--user-data-dir=");
            s.push(profile);
            s
        },
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-quic".into(),
        "--disable-default-apps".into(),
        "--disable-extensions".into(),
        "--disable-breakpad".into(),
        "--disable-domain-reliability".into(),
        "--metrics-recording-only".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
        "--mute-audio".into(),
        // Background tabs and timers run as in the foreground: the recording is of a page
        // nobody looks at.
        "--disable-background-timer-throttling".into(),
        "--disable-renderer-backgrounding".into(),
        "--disable-backgrounding-occluded-windows".into(),
    ];
    if !l.headed {
        v.push("--headless".into());
        v.push("--disable-gpu".into());
    }
    if !l.host_rules.is_empty() {
        v.push(format!("--host-resolver-rules={}", l.host_rules).into());
    }
    if is_root() && cfg!(target_os = "linux") {
        v.push("--no-sandbox".into());
    }
    v.extend(l.extra.iter().map(OsString::from));
    v.push("about:blank".into());
    v
}

/// Makes this process the reaper of its orphaned descendants (Linux), so the browser's
/// helper processes, orphaned when it is killed, are reaped here rather than left as
/// zombies under an init that may not reap.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// The last lines of the browser's log, for an error.
fn log_tail(profile: &Path) -> String {
    let text = std::fs::read(profile.join(LOG)).unwrap_or_default();
    let text = String::from_utf8_lossy(&text[text.len().saturating_sub(4096)..]).to_string();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last words: {tail}")
    }
}

/// The browser's standard error, kept in its profile folder (removed with it).
const LOG: &str = "taskchain-browser.log";

impl Browser {
    /// Starts the browser and waits (up to `l.timeout`) for its DevTools endpoint, which it
    /// writes to `DevToolsActivePort` in the profile folder. Errors: the program cannot be
    /// started, exits, or does not open DevTools in time (it is then stopped).
    pub(crate) fn launch(l: &Launch) -> Result<Browser, String> {
        let profile = tempfile::Builder::new()
            .prefix("taskchain-profile-")
            .tempdir()
            .map_err(|e| format!("cannot create a browser profile folder: {e}"))?;
        if is_root() && cfg!(target_os = "linux") && l.notes {
            say!("taskchain: note: running as root: the browser is started with --no-sandbox");
        }
        become_subreaper();
        let log = std::fs::File::create(profile.path().join(LOG))
            .map_err(|e| format!("cannot create a browser profile folder: {e}"))?;
        // The browser's own temporary files (crash reporter's database, shared memory
        // when /dev/shm is short) go into the profile folder and go with it.
        let tmp = profile.path().join("tmp");
        std::fs::create_dir(&tmp)
            .map_err(|e| format!("cannot create a browser profile folder: {e}"))?;
        let mut cmd = Command::new(&l.program);
        cmd.args(flags(l, profile.path()))
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", l.program.display()))?;
        let mut b = Browser {
            child: Some(child),
            profile: Some(profile),
            ws_url: String::new(),
            cleanup: None,
        };
        b.cleanup = Some(b.register_cleanup());
        let port_file = b.profile_path().join("DevToolsActivePort");
        let deadline = Instant::now() + l.timeout;
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next())
                    && port.trim().parse::<u16>().is_ok()
                {
                    b.ws_url = format!("ws://127.0.0.1:{}{}", port.trim(), path.trim());
                    return Ok(b);
                }
            }
            if let Some(status) = b.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                let tail = log_tail(b.profile_path());
                return Err(format!(
                    "the browser {} exited as it started ({status}){tail}",
                    l.program.display()
                ));
            }
            if Instant::now() >= deadline {
                let tail = log_tail(b.profile_path());
                return Err(format!(
                    "the browser {} did not open its DevTools endpoint within {} s (--timeout){tail}",
                    l.program.display(),
                    l.timeout.as_secs_f64()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn profile_path(&self) -> &Path {
        self.profile.as_ref().map_or(Path::new(""), |p| p.path())
    }

    /// Registers the kill and the folder's removal to run on an interrupt.
    fn register_cleanup(&self) -> u64 {
        let pid = self.child.as_ref().map_or(0, |c| c.id());
        let dir = self.profile_path().to_path_buf();
        crate::output::on_interrupt(Box::new(move || {
            kill_group(pid);
            reap_group(pid, Duration::from_secs(2));
            reap_adopted();
            let _ = std::fs::remove_dir_all(&dir);
        }))
    }

    /// The browser's exit status when it has exited.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Stops the browser: waits up to `grace` for it to exit by itself (after
    /// `Browser.close`), then kills its process group, reaps its processes and removes
    /// the profile folder.
    pub(crate) fn stop(&mut self, grace: Duration) {
        if let Some(mut child) = self.child.take() {
            let pid = child.id();
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            kill_group(pid);
            let _ = child.kill();
            let _ = child.wait();
            reap_group(pid, Duration::from_secs(5));
            reap_adopted();
        }
        if let Some(p) = self.profile.take() {
            // A helper process may still write in it for a moment: try again briefly.
            let path = p.path().to_path_buf();
            if p.close().is_err() {
                for _ in 0..20 {
                    std::thread::sleep(Duration::from_millis(50));
                    if std::fs::remove_dir_all(&path).is_ok() || !path.exists() {
                        break;
                    }
                }
            }
        }
        if let Some(k) = self.cleanup.take() {
            crate::output::forget_on_interrupt(k);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.stop(Duration::ZERO);
    }
}

/// SIGKILL to every process of the group led by `pid`.
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid)
        && pid > 0
    {
        // SAFETY: kill takes no pointers; a negative pid names the process group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Waits (up to `timeout`) for the processes of the group led by `pid` that became this
/// process's children to end, reaping each.
fn reap_group(pid: u32, timeout: Duration) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid)
        && pid > 0
    {
        let deadline = Instant::now() + timeout;
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status to a valid int; -pid names the group.
            let r = unsafe { libc::waitpid(-pid, &mut status, libc::WNOHANG) };
            if r > 0 {
                continue;
            }
            // No child of the group left (ECHILD; members reparented elsewhere were sent
            // SIGKILL and are not ours to reap), or the deadline passed.
            if r < 0 || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    #[cfg(not(unix))]
    let _ = (pid, timeout);
}

/// Kills and reaps the processes handed to this process as their subreaper: browser
/// helpers that left the browser's process group (Chromium's crash reporter starts in one of
/// its own) and outlived it. `record` starts no other process, so every child left once
/// the browser is stopped is one of them.
fn reap_adopted() {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id().to_string();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        for e in procs.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<libc::pid_t>() else {
                continue;
            };
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1));
            if ppid == Some(me.as_str()) {
                let mut status = 0;
                // SAFETY: kill and waitpid take a pid and a pointer to a valid int.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order_and_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let none = Search {
            explicit: None,
            chrome_path: None,
            path_var: Some(dir.path().as_os_str().to_owned()),
            locations: &["/nonexistent/chromium"],
        };
        let err = none.find().unwrap_err();
        assert!(err.contains("chromium-browser"), "{err}");
        assert!(err.contains("/nonexistent/chromium"), "{err}");
        assert!(err.contains("--browser"), "{err}");
        // A program on PATH is found; CHROME_PATH wins over it; --browser over both.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let make = |name: &str| {
                let p = dir.path().join(name);
                std::fs::write(&p, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
                p
            };
            let on_path = make("google-chrome");
            assert_eq!(none.find(), Ok(on_path.clone()));
            let other = make("my-chrome");
            let env = Search {
                chrome_path: Some(other.as_os_str().to_owned()),
                ..none
            };
            assert_eq!(env.find(), Ok(other.clone()));
            let missing = Path::new("/nonexistent/chrome");
            let given = Search {
                explicit: Some(missing),
                ..env
            };
            assert!(
                given
                    .find()
                    .unwrap_err()
                    .contains("--browser /nonexistent/chrome")
            );
            // A file that may not be run is no browser.
            std::fs::set_permissions(&on_path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(program(&on_path).is_none());
        }
    }
}

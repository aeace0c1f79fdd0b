//! One page under the protocol: loading, emulation, and the flow's steps. Input goes
//! through the browser's input pipeline (`Input.dispatchMouseEvent`, `dispatchKeyEvent`),
//! as a user's would, so the trace has the `EventTiming` of each interaction. Elements are
//! found by the step's selectors, the first that matches winning, retried until the step's
//! timeout.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cdp::{Cdp, CdpError};
use super::flow::{FlowStep, Selector, Step};

/// How often a step looks again for its element or expression.
const POLL: Duration = Duration::from_millis(100);

/// Finds elements for one selector part under a root (`this`: the document, or the element
/// the previous part found, whose shadow root or frame document is searched). CSS,
/// `xpath/`, `text/` (the innermost elements whose text contains it) and `pierce/` (CSS
/// through every open shadow root). Returns the first element, or with `count` the number
/// of matches.
const FIND_JS: &str = r#"function (part, count) {
  let root = this;
  if (root && root.nodeType === 1) root = root.shadowRoot || root.contentDocument || root;
  const doc = root.ownerDocument || root;
  const all = (r, sel) => {
    const out = [...r.querySelectorAll(sel)];
    for (const el of r.querySelectorAll('*')) if (el.shadowRoot) out.push(...all(el.shadowRoot, sel));
    return out;
  };
  let found = [];
  if (part.startsWith('xpath/')) {
    const it = doc.evaluate(part.slice(6), root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    for (let i = 0; i < it.snapshotLength; i++) found.push(it.snapshotItem(i));
  } else if (part.startsWith('text/')) {
    const text = part.slice(5);
    const has = (el) => (el.innerText || el.textContent || '').includes(text);
    found = [...root.querySelectorAll('*')].filter((el) => has(el) && ![...el.children].some(has));
  } else if (part.startsWith('pierce/')) {
    found = all(root, part.slice(7));
  } else {
    found = [...root.querySelectorAll(part)];
  }
  return count ? found.length : (found[0] || null);
}"#;

/// The element's box after scrolling it into view, in CSS pixels of the viewport, and
/// whether it is visible.
const BOX_JS: &str = r#"function (scroll) {
  if (scroll) this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  const r = this.getBoundingClientRect();
  const s = getComputedStyle(this);
  return {x: r.left, y: r.top, w: r.width, h: r.height,
          visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden'};
}"#;

/// A page attached through a flattened session.
pub(crate) struct Page<'a> {
    pub(crate) cdp: &'a mut Cdp,
    pub(crate) session: String,
    /// Deadline of one protocol command.
    pub(crate) timeout: Duration,
}

/// Why a step failed: the protocol failed (browser gone, crash, timeout) or the step.
pub(crate) enum StepError {
    Cdp(CdpError),
    Step(String),
}

impl From<CdpError> for StepError {
    fn from(e: CdpError) -> StepError {
        StepError::Cdp(e)
    }
}

impl Page<'_> {
    /// A command to the page.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.cdp
            .call(Some(&self.session), method, params, self.timeout)
    }

    /// Loads `url` and waits (up to `timeout`) for its load event. Errors: the browser
    /// could not load it (`net::ERR_…`), or the load did not end in time.
    pub(crate) fn navigate(&mut self, url: &str, timeout: Duration) -> Result<(), StepError> {
        let r = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(err) = r["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(StepError::Step(format!("cannot load {url}: {err}")));
        }
        // A same-document navigation (a fragment) has no loader and no load event.
        if r.get("loaderId").is_none() {
            return Ok(());
        }
        self.wait_load(timeout, url)
    }

    /// Waits for the page's next load event.
    fn wait_load(&mut self, timeout: Duration, what: &str) -> Result<(), StepError> {
        let session = self.session.clone();
        match self
            .cdp
            .wait_for(timeout, &format!("the load of {what}"), |e| {
                e.method == "Page.loadEventFired" && e.session.as_deref() == Some(&session)
            }) {
            Ok(_) => Ok(()),
            Err(CdpError::Timeout(_)) => Err(StepError::Step(format!(
                "{what} did not finish loading within {:.1} s",
                timeout.as_secs_f64()
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Emulates a viewport (`Emulation.setDeviceMetricsOverride`) and touch.
    pub(crate) fn set_viewport(
        &mut self,
        width: u32,
        height: u32,
        scale: f64,
        mobile: bool,
        touch: bool,
    ) -> Result<(), CdpError> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile}),
        )?;
        self.call(
            "Emulation.setTouchEmulationEnabled",
            json!({"enabled": touch, "maxTouchPoints": if touch { 5 } else { 1 }}),
        )?;
        Ok(())
    }

    /// Runs one flow step.
    pub(crate) fn run_step(&mut self, s: &FlowStep) -> Result<(), StepError> {
        let timeout = Duration::from_millis(s.timeout_ms);
        match &s.step {
            Step::SetViewport {
                width,
                height,
                device_scale_factor,
                is_mobile,
                has_touch,
            } => {
                self.set_viewport(
                    *width,
                    *height,
                    *device_scale_factor,
                    *is_mobile,
                    *has_touch,
                )?;
            }
            Step::Navigate { url } => return self.navigate(url, timeout.max(self.timeout)),
            Step::Click {
                selectors,
                offset,
                button,
                count,
                hold_ms,
            } => {
                let el = self.wait_element(selectors, timeout)?;
                let (x, y) = self.point(&el, *offset)?;
                self.mouse("mouseMoved", x, y, "none", 0)?;
                let button = match button.as_str() {
                    "auxiliary" => "middle",
                    "secondary" => "right",
                    "back" => "back",
                    "forward" => "forward",
                    _ => "left",
                };
                for n in 1..=*count {
                    self.mouse("mousePressed", x, y, button, n)?;
                    if *hold_ms > 0 {
                        std::thread::sleep(Duration::from_millis(*hold_ms));
                    }
                    self.mouse("mouseReleased", x, y, button, n)?;
                }
            }
            Step::Hover { selectors } => {
                let el = self.wait_element(selectors, timeout)?;
                let (x, y) = self.point(&el, None)?;
                self.mouse("mouseMoved", x, y, "none", 0)?;
            }
            Step::Change { selectors, value } => {
                let el = self.wait_element(selectors, timeout)?;
                // A <select> takes its value (there is no typing into it); other fields
                // are focused, emptied and typed into key by key.
                let typed = self.on(
                    &el,
                    "function (v) { if (this.tagName === 'SELECT') { this.value = v; \
                     this.dispatchEvent(new Event('input', {bubbles: true})); \
                     this.dispatchEvent(new Event('change', {bubbles: true})); return false; } \
                     this.focus(); if ('value' in this) { this.value = ''; } \
                     else if (this.isContentEditable) { this.textContent = ''; } return true; }",
                    json!([{ "value": value }]),
                )?;
                if typed == Value::Bool(true) {
                    for ch in value.chars() {
                        self.key(&ch.to_string(), true)?;
                        self.key(&ch.to_string(), false)?;
                    }
                }
            }
            Step::Key { key, down } => self.key(key, *down)?,
            Step::Scroll { selectors, x, y } => {
                if selectors.is_empty() {
                    self.eval(&format!("window.scroll({x}, {y})"))?;
                } else {
                    let el = self.wait_element(selectors, timeout)?;
                    self.on(
                        &el,
                        "function (x, y) { this.scrollTo(x, y); }",
                        json!([{ "value": x }, { "value": y }]),
                    )?;
                }
            }
            Step::WaitForElement {
                selectors,
                operator,
                count,
                visible,
            } => {
                let deadline = Instant::now() + timeout;
                loop {
                    let n = self.count(selectors, *visible)?;
                    let ok = match operator.as_str() {
                        "==" => n == *count,
                        "<=" => n <= *count,
                        _ => n >= *count,
                    };
                    if ok {
                        break;
                    }
                    if Instant::now() >= deadline {
                        return Err(StepError::Step(format!(
                            "{} element(s) match {}, not {operator} {count}, after {} ms",
                            n,
                            describe(selectors),
                            s.timeout_ms
                        )));
                    }
                    self.pause(POLL)?;
                }
            }
            Step::WaitForExpression { expression } => {
                let deadline = Instant::now() + timeout;
                loop {
                    let v = self.eval(expression)?;
                    let truthy = !matches!(v, Value::Null | Value::Bool(false))
                        && v != json!(0)
                        && v != json!("");
                    if truthy {
                        break;
                    }
                    if Instant::now() >= deadline {
                        return Err(StepError::Step(format!(
                            "the expression was not true within {} ms",
                            s.timeout_ms
                        )));
                    }
                    self.pause(POLL)?;
                }
            }
        }
        if s.waits_for_navigation && !matches!(s.step, Step::Navigate { .. }) {
            self.wait_load(timeout.max(self.timeout), "the navigation it caused")?;
        }
        Ok(())
    }

    /// Reads the socket for `d` (so that a crash or the end of a long task is seen).
    pub(crate) fn pause(&mut self, d: Duration) -> Result<(), CdpError> {
        let deadline = Instant::now() + d;
        while self.cdp.next_event(deadline)?.is_some() {}
        Ok(())
    }

    /// `Runtime.evaluate` by value, promises awaited; an exception is an error.
    fn eval(&mut self, expression: &str) -> Result<Value, StepError> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(StepError::Step(format!(
                "the page threw: {}",
                ex["exception"]["description"]
                    .as_str()
                    .or(ex["text"].as_str())
                    .unwrap_or("an exception")
            )));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Calls `function` with `this` the object `id` and `args` (CDP call arguments),
    /// returning its value.
    fn on(&mut self, id: &str, function: &str, args: Value) -> Result<Value, StepError> {
        let r = self.call(
            "Runtime.callFunctionOn",
            json!({"objectId": id, "functionDeclaration": function, "arguments": args,
                   "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(StepError::Step(format!(
                "the page threw: {}",
                ex["exception"]["description"]
                    .as_str()
                    .unwrap_or("an exception")
            )));
        }
        Ok(r["result"]["value"].clone())
    }

    /// The document's object id.
    fn document(&mut self) -> Result<String, CdpError> {
        let r = self.call("Runtime.evaluate", json!({"expression": "document"}))?;
        r["result"]["objectId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| CdpError::Protocol("Runtime.evaluate: no document".into()))
    }

    /// The elements one selector part finds under `root` (an object id): the first's id,
    /// or their number with `count`.
    fn find_part(
        &mut self,
        root: &str,
        part: &str,
        count: bool,
    ) -> Result<(Option<String>, u64), CdpError> {
        if let Some(aria) = part.strip_prefix("aria/") {
            let (name, role) = parse_aria(aria);
            let mut q = json!({ "objectId": root });
            if let Some(n) = name {
                q["accessibleName"] = n.into();
            }
            if let Some(r) = role {
                q["role"] = r.into();
            }
            let nodes = self.call("Accessibility.queryAXTree", q)?;
            let ids: Vec<u64> = nodes["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|n| n["ignored"] != Value::Bool(true))
                .filter_map(|n| n["backendDOMNodeId"].as_u64())
                .collect();
            if count {
                return Ok((None, ids.len() as u64));
            }
            let Some(&first) = ids.first() else {
                return Ok((None, 0));
            };
            let r = self.call("DOM.resolveNode", json!({ "backendNodeId": first }))?;
            return Ok((r["object"]["objectId"].as_str().map(str::to_string), 1));
        }
        let r = self.call(
            "Runtime.callFunctionOn",
            json!({"objectId": root, "functionDeclaration": FIND_JS,
                   "arguments": [{"value": part}, {"value": count}], "returnByValue": count}),
        )?;
        if r.get("exceptionDetails").is_some() {
            // A selector the page cannot parse matches nothing (the next one is tried).
            return Ok((None, 0));
        }
        if count {
            return Ok((None, r["result"]["value"].as_u64().unwrap_or(0)));
        }
        Ok((r["result"]["objectId"].as_str().map(str::to_string), 1))
    }

    /// The element of one selector (its parts in turn), if any; with `count`, the number
    /// of elements its last part matches.
    fn find(&mut self, sel: &Selector, count: bool) -> Result<(Option<String>, u64), CdpError> {
        let mut root = self.document()?;
        for (i, part) in sel.iter().enumerate() {
            let last = i + 1 == sel.len();
            let (id, n) = self.find_part(&root, part, count && last)?;
            if last && count {
                return Ok((None, n));
            }
            match id {
                Some(id) => root = id,
                None => return Ok((None, 0)),
            }
        }
        Ok((Some(root), 1))
    }

    /// The number of elements the first matching selector finds (visible ones when
    /// `visible` is true, hidden ones when false).
    fn count(&mut self, selectors: &[Selector], visible: Option<bool>) -> Result<u64, StepError> {
        for sel in selectors {
            let (_, n) = self.find(sel, true)?;
            if n == 0 {
                continue;
            }
            if let Some(want) = visible {
                // Visibility of the first match stands for the selector's.
                if let (Some(id), _) = self.find(sel, false)? {
                    let b = self.on(&id, BOX_JS, json!([{ "value": false }]))?;
                    if b["visible"].as_bool() != Some(want) {
                        return Ok(0);
                    }
                }
            }
            return Ok(n);
        }
        Ok(0)
    }

    /// The element of the first selector that matches, looked for until `timeout`.
    fn wait_element(
        &mut self,
        selectors: &[Selector],
        timeout: Duration,
    ) -> Result<String, StepError> {
        let deadline = Instant::now() + timeout;
        loop {
            for sel in selectors {
                if let (Some(id), _) = self.find(sel, false)? {
                    return Ok(id);
                }
            }
            if Instant::now() >= deadline {
                return Err(StepError::Step(format!(
                    "no element matches {} within {} ms",
                    describe(selectors),
                    timeout.as_millis()
                )));
            }
            self.pause(POLL)?;
        }
    }

    /// Where to put the mouse on the element (scrolled into view): its centre, or the
    /// step's offset from its top left corner.
    fn point(&mut self, id: &str, offset: Option<(f64, f64)>) -> Result<(f64, f64), StepError> {
        let b = self.on(id, BOX_JS, json!([{ "value": true }]))?;
        let f = |k: &str| b[k].as_f64().unwrap_or(0.0);
        if b["visible"] != Value::Bool(true) {
            return Err(StepError::Step("the element has no visible box".into()));
        }
        Ok(match offset {
            Some((dx, dy)) => (f("x") + dx, f("y") + dy),
            None => (f("x") + f("w") / 2.0, f("y") + f("h") / 2.0),
        })
    }

    /// One mouse event at (x, y).
    fn mouse(
        &mut self,
        kind: &str,
        x: f64,
        y: f64,
        button: &str,
        clicks: u32,
    ) -> Result<(), CdpError> {
        let mut p = json!({"type": kind, "x": x, "y": y, "button": button, "clickCount": clicks});
        if kind == "mousePressed" || kind == "mouseReleased" {
            // The pressed-buttons bit field of the DOM (left 1, right 2, middle 4, …).
            p["buttons"] = json!(if kind == "mousePressed" {
                match button {
                    "right" => 2,
                    "middle" => 4,
                    "back" => 8,
                    "forward" => 16,
                    _ => 1,
                }
            } else {
                0
            });
        }
        self.call("Input.dispatchMouseEvent", p)?;
        Ok(())
    }

    /// One key event (`Input.dispatchKeyEvent`): a key down carries the key's text, so
    /// that typing inserts it.
    fn key(&mut self, key: &str, down: bool) -> Result<(), StepError> {
        let k = key_info(key).ok_or_else(|| StepError::Step(format!("unknown key {key:?}")))?;
        let mut p = json!({
            "type": if down { if k.text.is_empty() { "rawKeyDown" } else { "keyDown" } } else { "keyUp" },
            "key": k.key,
            "code": k.code,
            "windowsVirtualKeyCode": k.key_code,
        });
        if down && !k.text.is_empty() {
            p["text"] = k.text.clone().into();
            p["unmodifiedText"] = k.text.into();
        }
        self.call("Input.dispatchKeyEvent", p)?;
        Ok(())
    }
}

/// `Name[role="button"]` → (name, role); either may be missing.
fn parse_aria(s: &str) -> (Option<String>, Option<String>) {
    let (name, attrs) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut role = None;
    let mut name = Some(name.trim().to_string()).filter(|n| !n.is_empty());
    for attr in attrs.split('[').filter(|a| !a.is_empty()) {
        let attr = attr.trim_end_matches(']');
        if let Some((k, v)) = attr.split_once('=') {
            let v = v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
            match k.trim() {
                "role" => role = Some(v),
                "name" => name = Some(v),
                _ => {}
            }
        }
    }
    (name, role)
}

/// Selectors as an error names them.
fn describe(selectors: &[Selector]) -> String {
    selectors
        .iter()
        .map(|s| s.join(" >> "))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `Input.dispatchKeyEvent` needs of a key: its `key` and `code` (UI Events
/// names), the Windows virtual key code, and the text it types.
#[derive(Debug, PartialEq)]
struct KeyInfo {
    key: String,
    code: String,
    key_code: u32,
    text: String,
}

/// A key by its UI Events `key` name (`Enter`, `a`, `ArrowDown`, …); `None` when unknown.
fn key_info(key: &str) -> Option<KeyInfo> {
    let named: &[(&str, &str, u32, &str)] = &[
        ("Enter", "Enter", 13, "\r"),
        ("Tab", "Tab", 9, ""),
        ("Escape", "Escape", 27, ""),
        ("Backspace", "Backspace", 8, ""),
        ("Delete", "Delete", 46, ""),
        ("ArrowLeft", "ArrowLeft", 37, ""),
        ("ArrowUp", "ArrowUp", 38, ""),
        ("ArrowRight", "ArrowRight", 39, ""),
        ("ArrowDown", "ArrowDown", 40, ""),
        ("Home", "Home", 36, ""),
        ("End", "End", 35, ""),
        ("PageUp", "PageUp", 33, ""),
        ("PageDown", "PageDown", 34, ""),
        ("Shift", "ShiftLeft", 16, ""),
        ("Control", "ControlLeft", 17, ""),
        ("Alt", "AltLeft", 18, ""),
        ("Meta", "MetaLeft", 91, ""),
        (" ", "Space", 32, " "),
    ];
    if let Some(&(k, code, kc, text)) = named.iter().find(|n| n.0 == key) {
        return Some(KeyInfo {
            key: k.into(),
            code: code.into(),
            key_code: kc,
            text: text.into(),
        });
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let (code, kc) = if c.is_ascii_alphabetic() {
        (
            format!("Key{}", c.to_ascii_uppercase()),
            u32::from(c.to_ascii_uppercase()),
        )
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), u32::from(c))
    } else {
        (String::new(), 0)
    };
    Some(KeyInfo {
        key: c.to_string(),
        code,
        key_code: kc,
        text: c.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aria_selectors() {
        assert_eq!(
            parse_aria(r#"Go[role="button"]"#),
            (Some("Go".into()), Some("button".into()))
        );
        assert_eq!(parse_aria("Search"), (Some("Search".into()), None));
        assert_eq!(parse_aria(r#"[role="link"]"#), (None, Some("link".into())));
    }

    #[test]
    fn keys() {
        let enter = key_info("Enter").unwrap();
        assert_eq!((enter.key_code, enter.text.as_str()), (13, "\r"));
        let a = key_info("a").unwrap();
        assert_eq!(
            (a.code.as_str(), a.key_code, a.text.as_str()),
            ("KeyA", 65, "a")
        );
        assert_eq!(key_info("7").unwrap().code, "Digit7");
        assert!(key_info("NoSuchKey").is_none());
        assert_eq!(key_info("é").unwrap().text, "é");
    }
}

//! A small Chrome DevTools Protocol client: JSON commands and events over one blocking
//! WebSocket (tungstenite), with a deadline on every wait. Pages are reached through
//! flattened sessions (`Target.attachToTarget` with `flatten: true`), so one socket carries
//! the browser's commands (tracing) and the page's (input, emulation).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// Events kept for the caller; every other event (network, console, …) is dropped as it
/// arrives, so nothing grows while a page runs.
const KEPT_EVENTS: &[&str] = &[
    "Page.loadEventFired",
    "Tracing.tracingComplete",
    "Inspector.targetCrashed",
    "Target.detachedFromTarget",
];

/// The binding the page's observer calls when the task `--until` waits for has ended
/// (`Runtime.addBinding`).
pub(crate) const UNTIL_BINDING: &str = "__taskchainUntil";

/// Kept events waiting for the caller at most: beyond this the oldest are dropped (a page
/// that calls the binding in a loop must not fill memory).
const MAX_QUEUED: usize = 1024;

/// A message from the browser larger than this is refused (`IO.read` chunks are asked for
/// at 1 MiB, base64 makes them 1.4 MiB).
const MAX_MESSAGE: usize = 64 << 20;

/// One CDP event.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// `Domain.event`.
    pub(crate) method: String,
    /// The flattened session it came from, `None` for the browser's.
    pub(crate) session: Option<String>,
    /// Its parameters.
    pub(crate) params: Value,
}

/// A connection to a browser's DevTools endpoint.
pub(crate) struct Cdp {
    ws: WebSocket<TcpStream>,
    next_id: u64,
    events: VecDeque<Event>,
    /// Set when the page's renderer crashed (`Inspector.targetCrashed`).
    pub(crate) crashed: bool,
    /// The first payload of the [`UNTIL_BINDING`] (JSON text of the page's entry).
    pub(crate) until: Option<String>,
}

/// What went wrong talking to the browser.
#[derive(Debug)]
pub(crate) enum CdpError {
    /// No answer before the deadline: what was waited for.
    Timeout(String),
    /// The socket closed or failed: the browser went away.
    Closed(String),
    /// The browser answered with an error.
    Protocol(String),
    /// The page's renderer crashed.
    Crashed,
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpError::Timeout(what) => write!(f, "the browser did not answer in time ({what})"),
            CdpError::Closed(why) => write!(f, "the connection to the browser closed ({why})"),
            CdpError::Protocol(msg) => f.write_str(msg),
            CdpError::Crashed => f.write_str("the page crashed (its renderer process is gone)"),
        }
    }
}

impl std::error::Error for CdpError {}

/// `ws://host:port/path` → (`host:port`, the URL).
fn ws_address(url: &str) -> Result<String, String> {
    let u = url::Url::parse(url).map_err(|e| format!("{url}: not a WebSocket URL ({e})"))?;
    if u.scheme() != "ws" {
        return Err(format!(
            "{url}: only ws:// DevTools endpoints are supported"
        ));
    }
    let host = u.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = u.port().unwrap_or(80);
    Ok(format!("{host}:{port}"))
}

/// Connects a TCP stream to `addr` within `timeout` (every address it resolves to).
fn connect_tcp(addr: &str, timeout: Duration) -> Result<TcpStream, String> {
    use std::net::ToSocketAddrs;
    let addrs = addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {addr}: {e}"))?;
    let mut last = format!("{addr}: no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    Err(last)
}

/// The browser's WebSocket endpoint from its HTTP endpoint (`http://127.0.0.1:9222`):
/// `webSocketDebuggerUrl` of `GET /json/version` (Chromium's DevToolsHttpHandler).
pub(crate) fn browser_ws_url(http: &str, timeout: Duration) -> Result<String, String> {
    let u = url::Url::parse(http).map_err(|e| format!("--connect {http}: not a URL ({e})"))?;
    let host = u
        .host_str()
        .ok_or_else(|| format!("--connect {http}: no host"))?;
    let addr = format!("{host}:{}", u.port_or_known_default().unwrap_or(80));
    let mut s = connect_tcp(&addr, timeout).map_err(|e| format!("--connect {http}: {e}"))?;
    let _ = s.set_read_timeout(Some(timeout));
    let _ = s.set_write_timeout(Some(timeout));
    write!(
        s,
        "GET /json/version HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("--connect {http}: {e}"))?;
    let mut body = Vec::new();
    // A version answer is a few hundred bytes: 1 MiB bounds a wrong server.
    s.take(1 << 20)
        .read_to_end(&mut body)
        .map_err(|e| format!("--connect {http}: no answer to GET /json/version ({e})"))?;
    let text = String::from_utf8_lossy(&body);
    let json_start = text.find("\r\n\r\n").map_or(0, |i| i + 4);
    let v: Value = serde_json::from_str(text[json_start..].trim()).map_err(|_| {
        format!("--connect {http}: GET /json/version did not answer with DevTools' JSON")
    })?;
    v["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("--connect {http}: no webSocketDebuggerUrl in /json/version"))
}

impl Cdp {
    /// Opens the WebSocket at `url` (`ws://…/devtools/browser/…`).
    pub(crate) fn connect(url: &str, timeout: Duration) -> Result<Cdp, String> {
        let addr = ws_address(url)?;
        let stream = connect_tcp(&addr, timeout)?;
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(timeout));
        let _ = stream.set_write_timeout(Some(timeout));
        let config = tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let (ws, _) = tungstenite::client::client_with_config(url, stream, Some(config))
            .map_err(|e| format!("cannot open the DevTools connection {url}: {e}"))?;
        Ok(Cdp {
            ws,
            next_id: 1,
            events: VecDeque::new(),
            crashed: false,
            until: None,
        })
    }

    /// Sends `method` with `params` (to the page of `session`, or the browser) and waits
    /// for its answer until `timeout`; events that arrive meanwhile are kept.
    pub(crate) fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::from(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .map_err(|e| CdpError::Closed(e.to_string()))?;
        let sent = Instant::now();
        let deadline = sent + timeout;
        loop {
            if let Some(reply) = self.read_one(deadline, method)?
                && reply["id"].as_u64() == Some(id)
            {
                if sent.elapsed() > Duration::from_millis(500)
                    && std::env::var_os("TASKCHAIN_TIMINGS").is_some()
                {
                    say!(
                        "taskchain: timing: record: {method} took {:.3} s",
                        sent.elapsed().as_secs_f64()
                    );
                }
                if let Some(err) = reply.get("error") {
                    let text = err["message"].as_str().unwrap_or("error");
                    return Err(CdpError::Protocol(format!("{method}: {text}")));
                }
                return Ok(reply["result"].clone());
            }
        }
    }

    /// The next kept event, reading until `deadline`; `None` when the deadline passed.
    pub(crate) fn next_event(&mut self, deadline: Instant) -> Result<Option<Event>, CdpError> {
        loop {
            if let Some(e) = self.events.pop_front() {
                return Ok(Some(e));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            match self.read_one(deadline, "an event") {
                Ok(_) => {}
                Err(CdpError::Timeout(_)) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits for the first kept event `pick` accepts, until `timeout` (`what` names it in
    /// the error). Events it does not accept are dropped.
    pub(crate) fn wait_for(
        &mut self,
        timeout: Duration,
        what: &str,
        mut pick: impl FnMut(&Event) -> bool,
    ) -> Result<Event, CdpError> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_event(deadline)? {
                Some(e) if pick(&e) => return Ok(e),
                Some(_) => {}
                None => return Err(CdpError::Timeout(what.to_string())),
            }
        }
    }

    /// Reads one message before `deadline`: an answer is returned, a kept event queued.
    fn read_one(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
    ) -> Result<Option<Value>, CdpError> {
        if self.crashed {
            return Err(CdpError::Crashed);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(CdpError::Timeout(waiting_for.to_string()));
        }
        let _ = self.ws.get_mut().set_read_timeout(Some(left));
        let msg = match self.ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(CdpError::Timeout(waiting_for.to_string()));
            }
            Err(e) => return Err(CdpError::Closed(e.to_string())),
        };
        let text = match msg {
            Message::Text(t) => t,
            Message::Close(_) => return Err(CdpError::Closed("the browser closed it".into())),
            _ => return Ok(None),
        };
        let v: Value = serde_json::from_str(text.as_str())
            .map_err(|e| CdpError::Protocol(format!("a message that is not JSON ({e})")))?;
        if v.get("id").is_some() {
            return Ok(Some(v));
        }
        let method = v["method"].as_str().unwrap_or_default();
        if method == "Inspector.targetCrashed" {
            self.crashed = true;
            return Err(CdpError::Crashed);
        }
        if method == "Runtime.bindingCalled" && v["params"]["name"] == UNTIL_BINDING {
            if self.until.is_none() {
                self.until = v["params"]["payload"].as_str().map(str::to_string);
            }
            return Ok(None);
        }
        if KEPT_EVENTS.contains(&method) {
            if self.events.len() >= MAX_QUEUED {
                self.events.pop_front();
            }
            self.events.push_back(Event {
                method: method.to_string(),
                session: v["sessionId"].as_str().map(str::to_string),
                params: v["params"].clone(),
            });
        }
        Ok(None)
    }

    /// Closes the socket politely (errors ignored: the browser may be gone).
    pub(crate) fn close(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ws_addresses() {
        assert_eq!(
            ws_address("ws://127.0.0.1:9222/devtools/browser/x"),
            Ok("127.0.0.1:9222".to_string())
        );
        assert!(ws_address("http://127.0.0.1:9222").is_err());
        assert!(ws_address("not a url").is_err());
    }
}

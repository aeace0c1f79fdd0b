//! User flows: the JSON that DevTools' Recorder panel exports (the `@puppeteer/replay`
//! schema: `{"title", "timeout"?, "steps": [{"type", …}]}`), read and checked whole before
//! any browser starts, so an unknown step type or a missing field is refused up front with
//! the step's index and type.

use std::path::Path;

use serde::Deserialize;

/// A step's `timeout` when neither it nor the recording gives one, in ms (the replay
/// library's default).
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// A flow file of at most this size is read (Recorder exports are a few KiB).
const MAX_FLOW_BYTES: u64 = 16 << 20;

/// The step types taskchain runs, as the error for another type lists them.
pub(crate) const STEP_TYPES: &[&str] = &[
    "setViewport",
    "navigate",
    "click",
    "doubleClick",
    "hover",
    "change",
    "keyDown",
    "keyUp",
    "scroll",
    "waitForElement",
    "waitForExpression",
];

/// One selector: a list of parts, each in the shadow root (or frame document) of the
/// element the part before found. Every part is CSS or has a prefix: `aria/`, `text/`,
/// `xpath/`, `pierce/`.
pub(crate) type Selector = Vec<String>;

/// A step, as the Recorder writes it (fields taskchain does not use are ignored).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// `Emulation.setDeviceMetricsOverride`.
    SetViewport {
        width: u32,
        height: u32,
        device_scale_factor: f64,
        is_mobile: bool,
        has_touch: bool,
    },
    /// Load a URL and wait for its load event.
    Navigate { url: String },
    /// A click (`count` 2 for `doubleClick`) at an offset in the element (its centre when
    /// the step gives none), with the mouse.
    Click {
        selectors: Vec<Selector>,
        offset: Option<(f64, f64)>,
        button: String,
        count: u32,
        /// Milliseconds between press and release.
        hold_ms: u64,
    },
    /// The mouse moved onto the element.
    Hover { selectors: Vec<Selector> },
    /// Type `value` into the element (or choose it in a `<select>`).
    Change {
        selectors: Vec<Selector>,
        value: String,
    },
    /// A key pressed (`down`) or released.
    Key { key: String, down: bool },
    /// Scroll the page (or the element) to `x`, `y` CSS pixels.
    Scroll {
        selectors: Vec<Selector>,
        x: f64,
        y: f64,
    },
    /// Wait until the selectors match `count` elements under `operator` (`>=`, `==`, `<=`).
    WaitForElement {
        selectors: Vec<Selector>,
        operator: String,
        count: u64,
        visible: Option<bool>,
    },
    /// Wait until the expression is truthy (promises awaited).
    WaitForExpression { expression: String },
}

/// A step with what every step has.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlowStep {
    /// 1-based index in `steps`.
    pub(crate) index: usize,
    /// The step's `type`, for messages.
    pub(crate) kind: String,
    /// How long the step may take, in ms.
    pub(crate) timeout_ms: u64,
    /// The step waits for a navigation it causes (`assertedEvents` of type navigation).
    pub(crate) waits_for_navigation: bool,
    pub(crate) step: Step,
}

/// A checked flow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Flow {
    /// Its `title`.
    pub(crate) title: String,
    pub(crate) steps: Vec<FlowStep>,
}

#[derive(Deserialize)]
struct RawFlow {
    #[serde(default)]
    title: String,
    timeout: Option<u64>,
    steps: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStep {
    timeout: Option<u64>,
    target: Option<String>,
    #[serde(default)]
    frame: Vec<u64>,
    #[serde(default)]
    selectors: Vec<RawSelector>,
    #[serde(default)]
    asserted_events: Vec<serde_json::Value>,
    // setViewport
    width: Option<u32>,
    height: Option<u32>,
    device_scale_factor: Option<f64>,
    is_mobile: Option<bool>,
    has_touch: Option<bool>,
    // navigate
    url: Option<String>,
    // click
    offset_x: Option<f64>,
    offset_y: Option<f64>,
    button: Option<String>,
    duration: Option<u64>,
    // change
    value: Option<String>,
    // keys
    key: Option<String>,
    // scroll
    x: Option<f64>,
    y: Option<f64>,
    // waitForElement
    operator: Option<String>,
    count: Option<u64>,
    visible: Option<bool>,
    // waitForExpression
    expression: Option<String>,
}

/// A selector as written: one string or a list of parts.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawSelector {
    One(String),
    Parts(Vec<String>),
}

impl Flow {
    /// Reads and checks the flow at `path`. Errors name the file and, for a step, its
    /// 1-based index and type.
    pub(crate) fn read(path: &Path) -> Result<Flow, String> {
        let name = path.display();
        let file = std::fs::File::open(path).map_err(|e| format!("--flow {name}: {e}"))?;
        let mut text = String::new();
        use std::io::Read;
        file.take(MAX_FLOW_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("--flow {name}: {e}"))?;
        if text.len() as u64 > MAX_FLOW_BYTES {
            return Err(format!(
                "--flow {name}: over {} MiB, not a Recorder flow",
                MAX_FLOW_BYTES >> 20
            ));
        }
        Flow::parse(&text).map_err(|e| format!("--flow {name}: {e}"))
    }

    /// Checks a flow's JSON text.
    pub(crate) fn parse(text: &str) -> Result<Flow, String> {
        let raw: RawFlow = serde_json::from_str(text).map_err(|e| {
            format!("not a DevTools Recorder flow ({e}); expected {{\"title\", \"steps\": [...]}}")
        })?;
        let default_timeout = raw.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        let steps = raw
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, v)| step(i + 1, v, default_timeout))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Flow {
            title: raw.title,
            steps,
        })
    }
}

impl Flow {
    /// True when a step loads a page.
    pub(crate) fn navigates(&self) -> bool {
        self.first_url().is_some()
    }

    /// The URL of the first `navigate` step.
    pub(crate) fn first_url(&self) -> Option<&str> {
        self.steps.iter().find_map(|s| match &s.step {
            Step::Navigate { url } => Some(url.as_str()),
            _ => None,
        })
    }
}

/// One step checked: `index` is 1-based.
fn step(index: usize, v: serde_json::Value, default_timeout: u64) -> Result<FlowStep, String> {
    let kind = v["type"].as_str().unwrap_or("").to_string();
    let at = |what: String| format!("step {index} ({kind}): {what}");
    if kind.is_empty() {
        return Err(format!("step {index}: no \"type\""));
    }
    if !STEP_TYPES.contains(&kind.as_str()) {
        return Err(at(format!(
            "unknown step type; taskchain runs {}",
            STEP_TYPES.join(", ")
        )));
    }
    let r: RawStep = serde_json::from_value(v).map_err(|e| at(e.to_string()))?;
    if let Some(t) = r.target.as_deref().filter(|t| *t != "main") {
        return Err(at(format!(
            "target {t:?}: only steps on the main page (\"main\") are supported"
        )));
    }
    if !r.frame.is_empty() {
        return Err(at(
            "steps inside frames (\"frame\") are not supported".into()
        ));
    }
    let need = |field: &str, v: Option<String>| v.ok_or_else(|| at(format!("no \"{field}\"")));
    let selectors: Vec<Selector> = r
        .selectors
        .into_iter()
        .map(|s| match s {
            RawSelector::One(s) => vec![s],
            RawSelector::Parts(p) => p,
        })
        .filter(|s| !s.is_empty())
        .collect();
    let need_selectors = || {
        if selectors.is_empty() {
            Err(at("no \"selectors\"".into()))
        } else {
            Ok(selectors.clone())
        }
    };
    let s = match kind.as_str() {
        "setViewport" => Step::SetViewport {
            width: r.width.ok_or_else(|| at("no \"width\"".into()))?,
            height: r.height.ok_or_else(|| at("no \"height\"".into()))?,
            device_scale_factor: r.device_scale_factor.unwrap_or(1.0),
            is_mobile: r.is_mobile.unwrap_or(false),
            has_touch: r.has_touch.unwrap_or(false),
        },
        "navigate" => Step::Navigate {
            url: need("url", r.url)?,
        },
        "click" | "doubleClick" => {
            let button = r.button.unwrap_or_else(|| "primary".into());
            if !["primary", "auxiliary", "secondary", "back", "forward"].contains(&button.as_str())
            {
                return Err(at(format!(
                    "button {button:?} is none of primary, auxiliary, secondary, back, forward"
                )));
            }
            Step::Click {
                selectors: need_selectors()?,
                offset: r.offset_x.zip(r.offset_y),
                button,
                count: if kind == "doubleClick" { 2 } else { 1 },
                hold_ms: r.duration.unwrap_or(0).min(60_000),
            }
        }
        "hover" => Step::Hover {
            selectors: need_selectors()?,
        },
        "change" => Step::Change {
            selectors: need_selectors()?,
            value: need("value", r.value)?,
        },
        "keyDown" | "keyUp" => Step::Key {
            key: need("key", r.key)?,
            down: kind == "keyDown",
        },
        "scroll" => Step::Scroll {
            selectors,
            x: r.x.unwrap_or(0.0),
            y: r.y.unwrap_or(0.0),
        },
        "waitForElement" => {
            let operator = r.operator.unwrap_or_else(|| ">=".into());
            if ![">=", "==", "<="].contains(&operator.as_str()) {
                return Err(at(format!("operator {operator:?} is none of >=, ==, <=")));
            }
            Step::WaitForElement {
                selectors: need_selectors()?,
                operator,
                count: r.count.unwrap_or(1),
                visible: r.visible,
            }
        }
        "waitForExpression" => Step::WaitForExpression {
            expression: need("expression", r.expression)?,
        },
        _ => unreachable!("checked against STEP_TYPES"),
    };
    let waits_for_navigation = r
        .asserted_events
        .iter()
        .any(|e| e["type"].as_str() == Some("navigation"));
    Ok(FlowStep {
        index,
        kind,
        timeout_ms: r.timeout.unwrap_or(default_timeout),
        waits_for_navigation,
        step: s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_export_is_read() {
        // The shape DevTools' Recorder exports (fields abridged).
        let f = Flow::parse(
            r##"{"title": "t", "steps": [
              {"type": "setViewport", "width": 800, "height": 600, "deviceScaleFactor": 1,
               "isMobile": false, "hasTouch": false, "isLandscape": false},
              {"type": "navigate", "url": "http://127.0.0.1/p.html",
               "assertedEvents": [{"type": "navigation", "url": "http://127.0.0.1/p.html", "title": ""}]},
              {"type": "click", "target": "main", "selectors": [["aria/Go"], ["#go"]],
               "offsetX": 10, "offsetY": 5},
              {"type": "doubleClick", "selectors": ["#go"], "timeout": 900},
              {"type": "keyDown", "key": "Enter"}, {"type": "keyUp", "key": "Enter"},
              {"type": "waitForElement", "selectors": [["#done"]], "count": 2, "operator": "=="},
              {"type": "waitForExpression", "expression": "window.ok"},
              {"type": "scroll", "x": 0, "y": 300},
              {"type": "change", "selectors": [["#q"]], "value": "abc"},
              {"type": "hover", "selectors": [["#go"]]}
            ]}"##,
        )
        .unwrap();
        assert_eq!(f.steps.len(), 11);
        assert!(f.steps[1].waits_for_navigation);
        assert_eq!(
            f.steps[2].step,
            Step::Click {
                selectors: vec![vec!["aria/Go".into()], vec!["#go".into()]],
                offset: Some((10.0, 5.0)),
                button: "primary".into(),
                count: 1,
                hold_ms: 0,
            }
        );
        assert_eq!((f.steps[2].index, f.steps[2].timeout_ms), (3, 5000));
        assert!(matches!(f.steps[3].step, Step::Click { count: 2, .. }));
        assert_eq!(f.steps[3].timeout_ms, 900);
        assert!(
            matches!(&f.steps[6].step, Step::WaitForElement { count: 2, operator, .. } if operator == "==")
        );
    }

    #[test]
    fn bad_steps_are_named_by_index_and_type() {
        let err =
            Flow::parse(r#"{"steps": [{"type": "navigate", "url": "x"}, {"type": "teleport"}]}"#)
                .unwrap_err();
        assert!(
            err.starts_with("step 2 (teleport): unknown step type"),
            "{err}"
        );
        let err = Flow::parse(r#"{"steps": [{"type": "click"}]}"#).unwrap_err();
        assert_eq!(err, "step 1 (click): no \"selectors\"");
        let err =
            Flow::parse(r#"{"steps": [{"type": "click", "selectors": ["a"], "target": "popup"}]}"#)
                .unwrap_err();
        assert!(err.contains("only steps on the main page"), "{err}");
        assert!(
            Flow::parse("[]")
                .unwrap_err()
                .contains("not a DevTools Recorder flow")
        );
    }
}

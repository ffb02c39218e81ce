//! A guard in front of the JSON-RPC codec: it re-frames the client's byte stream so that a bad
//! message costs one error response, never the connection.
//!
//! `tower-lsp-server` reads messages with a `tokio_util` codec, and a codec error ends the input
//! stream: one message that is not JSON, or not JSON-RPC, would shut the server down (and an
//! empty body stalls it). This layer reads each `Content-Length` frame itself, checks that the
//! body is a JSON-RPC 2.0 request, notification or response, and forwards it re-serialised; a bad
//! frame is replaced by a request for [`INVALID_MESSAGE`], which the server answers with a Parse
//! error (-32700) or an Invalid Request (-32600) error, under the message's id when it had a
//! usable one and `null` otherwise. A header block without a usable `Content-Length` counts as
//! one bad message.

use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The internal method a bad message is turned into; its params are `{code, message}`.
pub const INVALID_MESSAGE: &str = "threadradar/invalidMessage";

/// The largest body forwarded: the biggest legitimate message is a `didOpen` of a large source
/// file. A larger frame is answered with an error and its body skipped as it arrives, never held.
pub const MAX_BODY: usize = 64 << 20;

/// The longest header line kept: a longer one is read through and counts as a bad header.
const MAX_HEADER_LINE: usize = 8 << 10;

/// Copies frames from `input` to `output`, replacing bad ones. Returns when `input` ends or
/// `output` is closed.
pub async fn sanitise<I: AsyncRead + Unpin, O: AsyncWrite + Unpin>(input: I, mut output: O) {
    let mut r = BufReader::new(input);
    loop {
        let mut length: Option<u64> = None;
        let mut saw_header = false;
        loop {
            let Some(line) = read_line(&mut r).await else { return };
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if saw_header {
                    break;
                }
                continue; // a stray blank line between messages
            }
            saw_header = true;
            if let Some((name, value)) = text.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().ok();
                }
            }
        }
        let msg = match length {
            None => invalid(Value::Null, -32700, "the message has no usable Content-Length header"),
            Some(len) if len > MAX_BODY as u64 => {
                // Answered at once, then the body is read through in pieces as it arrives.
                let m = format!("the message is {len} bytes, over the {} MiB a message may have", MAX_BODY >> 20);
                if !forward(&mut output, &invalid(Value::Null, -32700, &m)).await {
                    return;
                }
                match tokio::io::copy(&mut (&mut r).take(len), &mut tokio::io::sink()).await {
                    Ok(n) if n == len => continue,
                    _ => return,
                }
            }
            Some(len) => {
                // Grown as the bytes arrive: a client that claims more than it sends holds no
                // more memory than it sent.
                let mut body = Vec::new();
                match (&mut r).take(len).read_to_end(&mut body).await {
                    Ok(n) if n as u64 == len => check(&body),
                    _ => return,
                }
            }
        };
        if !forward(&mut output, &msg).await {
            return;
        }
    }
}

/// Writes one frame; false when the output is closed.
async fn forward<O: AsyncWrite + Unpin>(output: &mut O, msg: &Value) -> bool {
    let bytes = msg.to_string();
    let frame = format!("Content-Length: {}\r\n\r\n{bytes}", bytes.len());
    output.write_all(frame.as_bytes()).await.is_ok() && output.flush().await.is_ok()
}

/// One header line, at most [`MAX_HEADER_LINE`] bytes of it kept (the rest is read through);
/// `None` at the end of the input.
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R) -> Option<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().await.ok()?;
        if buf.is_empty() {
            return if line.is_empty() { None } else { Some(line) };
        }
        let (used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = MAX_HEADER_LINE.saturating_sub(line.len());
        line.extend_from_slice(&buf[..used.min(room)]);
        r.consume(used);
        if done {
            return Some(line);
        }
    }
}

/// The message to forward for one body: itself, re-serialised, when it is JSON-RPC 2.0; the
/// invalid-message request otherwise.
pub fn check(body: &[u8]) -> Value {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return invalid(Value::Null, -32700, &format!("the message is not JSON ({e})")),
    };
    let Value::Object(o) = &v else { return invalid(Value::Null, -32600, "the message is not a JSON object") };
    let id = o.get("id");
    let id_ok = |id: Option<&Value>| match id {
        None | Some(Value::Null) | Some(Value::String(_)) => true,
        Some(Value::Number(n)) => n.as_i64().is_some(),
        _ => false,
    };
    let reply_id = if id_ok(id) { id.cloned().unwrap_or(Value::Null) } else { Value::Null };
    if o.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid(reply_id, -32600, "the message is not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\" is missing)");
    }
    if !id_ok(id) {
        return invalid(Value::Null, -32600, "the id is not an integer, a string or null");
    }
    match o.get("method") {
        Some(Value::String(_)) => v,
        Some(_) => invalid(reply_id, -32600, "the method is not a string"),
        None if id.is_some() && response_ok(o) => v,
        None => invalid(reply_id, -32600, "the message is neither a request nor a response"),
    }
}

fn response_ok(o: &Map<String, Value>) -> bool {
    match (o.get("result"), o.get("error")) {
        (Some(_), None) => true,
        (None, Some(Value::Object(e))) => {
            e.get("code").is_some_and(|c| c.as_i64().is_some())
                && e.get("message").is_some_and(|m| m.is_string())
                && e.keys().all(|k| k == "code" || k == "message" || k == "data")
        }
        _ => false,
    }
}

fn invalid(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": INVALID_MESSAGE, "params": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_frames_become_invalid_message_requests_and_good_ones_pass() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        let input = format!("Content-Length: 0\r\n\r\nContent-Length: {}\r\n\r\n{good}X-Junk: 1\r\n\r\n", good.len()).into_bytes();
        let mut out = Vec::new();
        sanitise(&input[..], &mut out).await;
        let out = String::from_utf8(out).unwrap();
        let bodies: Vec<&str> = out.split("Content-Length: ").skip(1).map(|f| f.split_once("\r\n\r\n").unwrap().1).collect();
        assert_eq!(bodies.len(), 3);
        assert!(bodies[0].contains(INVALID_MESSAGE) && bodies[0].contains("-32700"));
        assert_eq!(serde_json::from_str::<Value>(bodies[1]).unwrap(), json!({"jsonrpc":"2.0","id":1,"method":"x"}));
        assert!(bodies[2].contains("no usable Content-Length"));
    }

    #[tokio::test]
    async fn an_over_large_frame_is_answered_then_skipped_and_long_header_lines_are_cut() {
        let good = r#"{"jsonrpc":"2.0","id":2,"method":"y"}"#;
        let big = MAX_BODY + 3;
        let mut input = format!("Content-Length: {big}\r\n\r\n").into_bytes();
        input.extend(std::iter::repeat_n(b'{', big));
        input.extend(format!("X-Long: {}\r\nContent-Length: {}\r\n\r\n{good}", "y".repeat(1 << 20), good.len()).bytes());
        let mut out = Vec::new();
        sanitise(&input[..], &mut out).await;
        let out = String::from_utf8(out).unwrap();
        let bodies: Vec<&str> = out.split("Content-Length: ").skip(1).map(|f| f.split_once("\r\n\r\n").unwrap().1).collect();
        assert_eq!(bodies.len(), 2, "{out:.300}");
        assert!(bodies[0].contains("over the 64 MiB"), "{}", bodies[0]);
        assert_eq!(serde_json::from_str::<Value>(bodies[1]).unwrap()["id"], 2);
    }

    #[test]
    fn what_counts_as_json_rpc() {
        let bad = |s: &str| check(s.as_bytes())["method"] == INVALID_MESSAGE;
        assert!(bad("[]"));
        assert!(bad(r#"{"id": {}, "method": 5}"#));
        assert!(bad(r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#));
        assert!(bad(r#"{"jsonrpc":"2.0","id":3}"#));
        assert!(bad(r#"{"jsonrpc":"2.0","id":3,"error":{"code":1}}"#));
        assert_eq!(check(br#"{"jsonrpc":"1.0","id":7,"method":"m"}"#)["id"], 7);
        assert!(!bad(r#"{"jsonrpc":"2.0","method":"m","params":"x"}"#));
        assert!(!bad(r#"{"jsonrpc":"2.0","id":"a","result":null}"#));
        assert!(!bad(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#));
    }
}

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
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The internal method a bad message is turned into; its params are `{code, message}`.
pub const INVALID_MESSAGE: &str = "threadradar/invalidMessage";

/// Larger bodies are treated as garbage: nothing legitimate is this big.
const MAX_BODY: usize = 512 << 20;

/// Copies frames from `input` to `output`, replacing bad ones. Returns when `input` ends or
/// `output` is closed.
pub async fn sanitise<I: AsyncRead + Unpin, O: AsyncWrite + Unpin>(input: I, mut output: O) {
    let mut r = BufReader::new(input);
    loop {
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
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
        let forward = match length.filter(|&l| l <= MAX_BODY) {
            None => invalid(Value::Null, -32700, "the message has no usable Content-Length header"),
            Some(len) => {
                let mut body = vec![0; len];
                if r.read_exact(&mut body).await.is_err() {
                    return;
                }
                check(&body)
            }
        };
        let bytes = forward.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{bytes}", bytes.len());
        if output.write_all(frame.as_bytes()).await.is_err() || output.flush().await.is_err() {
            return;
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

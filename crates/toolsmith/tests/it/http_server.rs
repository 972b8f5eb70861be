//! A one-thread HTTP/1.1 server on loopback for the `http.*` tests (call.rs, sandbox.rs).

use std::io::{BufRead, BufReader, Read, Write};

/// Starts a server that serves until the test exits; its port. Each request is answered
/// with `route(target, port)` when that gives a location to redirect to (302), else with
/// its request line, body and this server's port as JSON.
pub(crate) fn echo_server(route: fn(&str, u16) -> Option<String>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Some((request_line, body)) = read_request(&stream) else {
                continue;
            };
            let target = request_line.split(' ').nth(1).unwrap_or("/");
            let response = if let Some(location) = route(target, port) {
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                let echo = serde_json::json!({
                    "request": request_line.trim(),
                    "body": String::from_utf8_lossy(&body),
                    "port": port,
                })
                .to_string();
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{echo}",
                    echo.len()
                )
            };
            let _ = stream.write_all(response.as_bytes());
        }
    });
    port
}

/// The request line and body of one request; `None` when the connection breaks off.
fn read_request(stream: &std::net::TcpStream) -> Option<(String, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((request_line, body))
}

"""An OTLP/HTTP trace receiver for crates/toolsmith/tests/it/telemetry.rs.

    receiver.py SPANS_FILE

Listens on 127.0.0.1 (a free port, printed as the first line of stdout), decodes each
POST to /v1/traces as an `ExportTraceServiceRequest` (OTLP's protobuf, with the
`opentelemetry-proto` package) and appends every span to SPANS_FILE as one JSON line:
its service, name, kind, ids in hex, attributes and status. Answers as a collector does
(an empty `ExportTraceServiceResponse`). A GET (a tool's own request) is answered `hello`
and recorded with its `traceparent` header. Runs until killed.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return str(getattr(any_value, kind))
    found = getattr(any_value, kind)
    return found.hex() if kind == "bytes_value" else found


def attributes(pairs):
    return {pair.key: value(pair.value) for pair in pairs}


class Receiver(BaseHTTPRequestHandler):
    def do_GET(self):
        # A tool's own HTTP request: what trace context it carried.
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            out.write(json.dumps({"get": self.path, "traceparent": self.headers.get("traceparent")}) + "\n")
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(
                            json.dumps(
                                {
                                    "service": resource.get("service.name"),
                                    "name": span.name,
                                    "kind": span.kind,
                                    "trace_id": span.trace_id.hex(),
                                    "span_id": span.span_id.hex(),
                                    "parent_span_id": span.parent_span_id.hex(),
                                    "attributes": attributes(span.attributes),
                                    "status": span.status.code,
                                    "status_message": span.status.message,
                                }
                            )
                            + "\n"
                        )
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()

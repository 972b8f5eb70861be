"""A small pet store and order API for the OpenAPI tests (crates/toolsmith/tests/it/openapi.rs).

Binds 127.0.0.1 on a free port, prints `PORT <n>` and serves until killed. Every request
except `GET /__requests` is counted, so a test can see that a rejected call sent nothing.
Pet routes need the header `X-Api-Key: secret`.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

PETS = {1: {"id": 1, "name": "Rex", "tag": "dog"}, 2: {"id": 2, "name": "Tom", "tag": None}}
ORDERS = {}
REQUESTS = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, value=None):
        body = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        if value is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def route(self, method):
        global REQUESTS
        url = urlsplit(self.path)
        parts = [unquote(part) for part in url.path.split("/")[1:]]
        query = parse_qs(url.query)
        if method == "GET" and parts == ["__requests"]:
            return self.answer(200, {"count": REQUESTS})
        REQUESTS += 1
        if parts[0] == "pets":
            if self.headers.get("X-Api-Key") != "secret":
                return self.answer(401, {"message": "missing or wrong X-Api-Key"})
            if len(parts) == 1 and method == "GET":
                pets = sorted(PETS.values(), key=lambda pet: pet["id"])
                tags = query.get("tag")
                if tags:
                    pets = [pet for pet in pets if pet["tag"] in tags]
                limit = int(query.get("limit", ["100"])[0])
                return self.answer(200, {"pets": pets[:limit]})
            if len(parts) == 1 and method == "POST":
                new = self.body()
                pet = {"id": max(PETS) + 1, "name": new["name"], "tag": new.get("tag")}
                PETS[pet["id"]] = pet
                return self.answer(201, pet)
            pet_id = int(parts[1])
            if pet_id not in PETS:
                return self.answer(404, {"message": f"no pet {pet_id}"})
            if method == "GET":
                return self.answer(200, PETS[pet_id])
            if method == "PUT":
                PETS[pet_id].update(self.body())
                return self.answer(200, PETS[pet_id])
            if method == "DELETE":
                del PETS[pet_id]
                return self.answer(204)
        if parts[0] == "echo" and method == "GET":
            return self.answer(200, {"text": parts[1], "trace": self.headers.get("X-Trace")})
        if parts[0] == "orders":
            if method == "POST":
                order = self.body()
                order["id"] = f"o{len(ORDERS) + 1}"
                order.setdefault("note", None)
                ORDERS[order["id"]] = order
                return self.answer(200, order)
            if method == "GET" and parts[1] in ORDERS:
                return self.answer(200, ORDERS[parts[1]])
            return self.answer(404, {"message": f"no order {parts[1]}"})
        if parts == ["health"]:
            return self.answer(200, {"ok": True})
        return self.answer(404, {"message": "no route " + url.path})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT", server.server_address[1], flush=True)
sys.stdout.close()
server.serve_forever()

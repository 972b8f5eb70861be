"use strict";
// The page's try-it forms and token prompt (docs/http.md, "The page"). Hand-written, no
// dependencies; every text from the server is put into the page as text, never as HTML.
(() => {
  const TOKEN_KEY = "toolsmith-token";
  let nextId = 1;

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  // With a token set, the server answers `/` with 401 and this page's token form; the
  // full page is fetched with the token and put in place of this one.
  async function unlock(candidate) {
    const status = document.getElementById("token-status");
    if (status) status.textContent = "Checking the token…";
    let response;
    try {
      response = await fetch(location.pathname, { headers: { Authorization: `Bearer ${candidate}` } });
    } catch (error) {
      if (status) status.textContent = `The server did not answer: ${error.message}`;
      return;
    }
    if (response.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      if (status) {
        status.className = "error";
        status.textContent = "401 Unauthorized: the server refused this token. Check it and try again.";
      }
      return;
    }
    if (!response.ok) {
      if (status) status.textContent = `${response.status} ${response.statusText}: ${await response.text()}`;
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, candidate);
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    document.title = page.title;
    document.body.replaceWith(document.adoptNode(page.body));
    wire();
  }

  // A control's value for the call's arguments; `undefined` leaves the parameter out.
  function valueOf(control) {
    const raw = control.value.trim();
    const kind = control.dataset.kind;
    const name = control.dataset.param;
    if (raw === "") {
      if (control.hasAttribute("data-required")) throw new Error(`\`${name}\` is required`);
      return undefined;
    }
    switch (kind) {
      case "string": return control.value;
      case "number":
      case "integer": {
        const number = Number(raw);
        if (!Number.isFinite(number)) throw new Error(`\`${name}\` must be a number`);
        if (kind === "integer" && !Number.isInteger(number)) throw new Error(`\`${name}\` must be a whole number`);
        return number;
      }
      default:
        try {
          return JSON.parse(raw);
        } catch (error) {
          throw new Error(`\`${name}\` is not valid JSON: ${error.message}`);
        }
    }
  }

  function show(box, ok, nodes) {
    box.className = `result ${ok ? "ok" : "error"}`;
    box.replaceChildren(...nodes);
  }

  function renderResult(result) {
    const nodes = [];
    if (result.isError) nodes.push(element("strong", "", "The tool reported an error (isError):"));
    for (const block of result.content || []) {
      if (block.type === "text") nodes.push(element("pre", "", block.text));
      else if (block.type === "image") {
        const image = element("img");
        image.src = `data:${block.mimeType};base64,${block.data}`;
        image.alt = "image returned by the tool";
        nodes.push(image);
      } else if (block.type === "audio") {
        const audio = element("audio");
        audio.controls = true;
        audio.src = `data:${block.mimeType};base64,${block.data}`;
        nodes.push(audio);
      } else if (block.type === "resource_link") {
        nodes.push(element("p", "", `Resource link: ${block.uri}${block.name ? ` (${block.name})` : ""}`));
      } else if (block.type === "resource") {
        const resource = block.resource || {};
        nodes.push(element("h4", "", `Resource ${resource.uri || ""}`));
        nodes.push(element("pre", "", resource.text !== undefined ? resource.text : `(${resource.mimeType || "binary"}, base64)`));
      } else nodes.push(element("pre", "", JSON.stringify(block, null, 2)));
    }
    if (result.structuredContent !== undefined) {
      nodes.push(element("h4", "", "Structured content"));
      nodes.push(element("pre", "structured", JSON.stringify(result.structuredContent, null, 2)));
    }
    return nodes;
  }

  async function call(form) {
    const box = form.querySelector(".result");
    const args = {};
    try {
      for (const control of form.querySelectorAll("[data-param]")) {
        const value = valueOf(control);
        if (value !== undefined) args[control.dataset.param] = value;
      }
    } catch (error) {
      show(box, false, [element("p", "", error.message)]);
      return;
    }
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    if (token()) headers.Authorization = `Bearer ${token()}`;
    const body = { jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: form.dataset.tool, arguments: args } };
    show(box, true, [element("p", "note", "Calling…")]);
    let response;
    try {
      response = await fetch(document.body.dataset.mcpPath, { method: "POST", headers, body: JSON.stringify(body) });
    } catch (error) {
      show(box, false, [element("p", "", `The server did not answer: ${error.message}`)]);
      return;
    }
    const text = await response.text();
    if (response.status === 401) {
      show(box, false, [element("p", "", "401 Unauthorized: the server wants a valid bearer token. Reload the page and enter the token.")]);
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      const hint = response.status === 403 ? " (a page served on another host name needs --allow-origin for it)" : "";
      show(box, false, [element("p", "", `${response.status} ${response.statusText}${hint}`), element("pre", "", text)]);
      return;
    }
    if (message.error) {
      show(box, false, [element("p", "", `JSON-RPC error ${message.error.code}: ${message.error.message}`)]);
      return;
    }
    const result = message.result || {};
    show(box, !result.isError, renderResult(result));
  }

  function wire() {
    for (const form of document.querySelectorAll("form.try-form")) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        call(form);
      });
    }
    const tokenForm = document.getElementById("token-form");
    if (tokenForm) {
      tokenForm.addEventListener("submit", (event) => {
        event.preventDefault();
        unlock(document.getElementById("token").value.trim());
      });
    }
    const forget = document.getElementById("forget-token");
    if (forget) {
      forget.addEventListener("click", () => {
        sessionStorage.removeItem(TOKEN_KEY);
        location.reload();
      });
    }
    for (const block of document.querySelectorAll("pre.copy, code.copy")) {
      if (!navigator.clipboard) break;
      const button = element("button", "copy-button", "Copy");
      button.type = "button";
      button.addEventListener("click", async () => {
        await navigator.clipboard.writeText(block.textContent);
        button.textContent = "Copied";
      });
      block.after(button);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    wire();
    if (document.body.hasAttribute("data-locked") && token()) unlock(token());
  });
})();

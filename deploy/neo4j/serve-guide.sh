#!/usr/bin/env bash
# Serves deploy/neo4j/ on http://localhost:${PORT:-8001}/ for Neo4j Browser's `:play`. Browser
# fetches a guide cross-origin, so the answer needs a CORS header (python's http.server sends
# none); localhost is in Neo4j 5's default browser.remote_content_hostname_allowlist.
set -euo pipefail
cd "$(dirname "$0")"
exec node -e '
const http = require("node:http"), fs = require("node:fs"), path = require("node:path");
const port = Number(process.env.PORT || 8001);
http.createServer((req, res) => {
  const name = path.basename(decodeURIComponent(new URL(req.url, "http://x").pathname)) || "browser-guide.html";
  fs.readFile(name, (error, body) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    if (error) { res.writeHead(404).end("not found"); return; }
    res.writeHead(200, { "Content-Type": name.endsWith(".html") ? "text/html" : "text/plain" }).end(body);
  });
}).listen(port, "127.0.0.1", () => console.log(`in Neo4j Browser: :play http://localhost:${port}/browser-guide.html`));
'

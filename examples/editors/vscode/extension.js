// plugtop's language server in VS Code: a minimal extension. Beside it,
// package.json (the manifest: the `cpuplugd` language for cpuplugd.conf
// and *.conf in a cpuplugd directory, and two settings). To use it:
//   plugtop generate editor vscode > DIR/package.json
//   plugtop generate editor vscode-js > DIR/extension.js
//   cd DIR && npm install && npx @vscode/vsce package
// then install the .vsix it makes ("Extensions: Install from VSIX...").
//
// --root: the setting `plugtop.root` is passed as `plugtop lsp --root DIR`
// (names and live values from a copy of another guest's /proc and /sys, or
// a root served by `plugtop sim --serve DIR`); empty reads the kernel
// under /.

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("plugtop");
  const args = ["lsp"];
  const root = settings.get("root");
  if (root) {
    args.push("--root", root);
  }
  const server = { command: settings.get("path") || "plugtop", args };
  client = new LanguageClient(
    "plugtop",
    "plugtop",
    { run: server, debug: server },
    { documentSelector: [{ language: "cpuplugd" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };

// The host side of MCP Apps for tests/e2e/mcp_apps.rs: the official
// AppBridge (@modelcontextprotocol/ext-apps) connected to a view in an
// iframe, as a chat client runs it. scripts/mcp-apps-host.sh bundles this
// for the browser. window.startHost(html, input, result) shows the view and,
// once it has initialized, sends it the tool's input and result.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.startHost = async (html, toolInput, toolResult) => {
  window.hostState = "starting";
  window.openedLinks = [];
  const iframe = document.createElement("iframe");
  // Same origin only so the test can read the view's DOM and run axe in it;
  // a real host serves the view from a sandbox origin of its own.
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin");
  iframe.title = "cairn: cited lines";
  iframe.style.width = "100%";
  iframe.style.height = "600px";
  document.body.append(iframe);
  const bridge = new AppBridge(null, { name: "cairn-test-host", version: "1.0.0" }, { openLinks: {} });
  bridge.oninitialized = async () => {
    window.hostState = "initialized";
    await bridge.sendToolInput({ arguments: toolInput });
    await bridge.sendToolResult(toolResult);
  };
  bridge.onsizechange = (size) => {
    window.hostSize = size;
    window.hostState = "rendered";
  };
  bridge.onopenlink = async ({ url }) => {
    window.openedLinks.push(url);
    return {};
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
};

package realagents

import (
	"bufio"
	"encoding/json"
	"io"
)

// MCPTool is the one tool the harness's stdio MCP server offers.
const MCPTool = "echo"

// ServeMCP is a minimal Model Context Protocol server over stdio
// (newline-delimited JSON-RPC 2.0), for the scenarios that call an MCP tool
// from a real agent: it answers initialize, ping and tools/list, and
// tools/call of MCPTool with the text it was given. It returns the exit
// status when in closes.
func ServeMCP(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Arguments       map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification, or not JSON-RPC: nothing to answer
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			version := req.Params.ProtocolVersion
			if version == "" {
				version = "2025-06-18"
			}
			resp["result"] = map[string]any{
				"protocolVersion": version,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "aep-probe", "version": "1.0.0"},
			}
		case "ping":
			resp["result"] = map[string]any{}
		case "tools/list":
			resp["result"] = map[string]any{"tools": []any{map[string]any{
				"name":        MCPTool,
				"description": "Echo the given text back.",
				"inputSchema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"text": map[string]any{"type": "string"}},
					"required":   []any{"text"},
				},
			}}}
		case "tools/call":
			text, _ := req.Params.Arguments["text"].(string)
			resp["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
		default:
			resp["error"] = map[string]any{"code": -32601, "message": "method not found: " + req.Method}
		}
		if enc.Encode(resp) != nil {
			return 1
		}
	}
	return 0
}

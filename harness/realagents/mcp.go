package realagents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MCPTool is the echo tool the harness's stdio MCP server offers.
const MCPTool = "echo"

// MCPElicitTool is the server's second tool: calling it asks the client
// for a small deployment form (MCP form elicitation) and returns what the
// client answered. It is offered only to a client that declared it can
// take form elicitations.
const MCPElicitTool = "deploy"

// MCPElicitMessage is the message of the deploy tool's elicitation.
const MCPElicitMessage = "Configure the deployment"

// mcpElicitSchema is the deploy tool's requested schema: a flat object of
// primitive fields, as MCP's form elicitation allows (an enum, an integer
// with bounds, a boolean, a free string). It is raw JSON so the fields
// keep the order a form shows them in.
var mcpElicitSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"env":{"type":"string","title":"Environment","enum":["staging","production"],"enumNames":["Staging","Production"]},` +
	`"replicas":{"type":"integer","title":"Replicas","minimum":1,"maximum":5},` +
	`"confirm":{"type":"boolean","title":"Really deploy?"},` +
	`"note":{"type":"string","title":"Note for the log"}},` +
	`"required":["env","confirm"]}`)

// mcpMessage is one JSON-RPC 2.0 message read from the client: a request
// or notification (method set) or a response to the server's own request
// (result or error, no method).
type mcpMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Name            string         `json:"name"`
		Arguments       map[string]any `json:"arguments"`
		Capabilities    struct {
			Elicitation *struct {
				Form *struct{} `json:"form"`
				URL  *struct{} `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	} `json:"params"`
	Result *struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ServeMCP is a minimal Model Context Protocol server over stdio
// (newline-delimited JSON-RPC 2.0), for the scenarios that call an MCP tool
// from a real agent: it answers initialize, ping and tools/list, and
// tools/call of MCPTool with the text it was given. A client that declared
// the elicitation capability is offered MCPElicitTool too, whose call
// sends the client an elicitation/create request and, once the client
// answers it, returns the answer (action and content) as the tool's
// result. It advertises the tools capability only: elicitation is the
// client's. It returns the exit status when in closes.
func ServeMCP(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(out)
	canElicit := false
	// waiting maps the id of each elicitation/create the server sent to
	// the id of the tools/call it answers.
	waiting := map[string]json.RawMessage{}
	next := 0
	for sc.Scan() {
		var msg mcpMessage
		if json.Unmarshal(sc.Bytes(), &msg) != nil || len(msg.ID) == 0 {
			continue // a notification, or not JSON-RPC: nothing to answer
		}
		var resp map[string]any
		switch {
		case msg.Method == "":
			call, ok := waiting[string(msg.ID)]
			if !ok {
				continue // a response to nothing the server asked
			}
			delete(waiting, string(msg.ID))
			resp = map[string]any{"jsonrpc": "2.0", "id": call, "result": elicitResult(msg)}
		case msg.Method == "tools/call" && msg.Params.Name == MCPElicitTool && canElicit:
			next++
			id := json.RawMessage(fmt.Sprintf(`"elicit-%d"`, next))
			waiting[string(id)] = msg.ID
			resp = map[string]any{"jsonrpc": "2.0", "id": id, "method": "elicitation/create",
				"params": map[string]any{"message": MCPElicitMessage, "requestedSchema": mcpElicitSchema}}
		default:
			resp = mcpAnswer(msg, &canElicit)
		}
		if enc.Encode(resp) != nil {
			return 1
		}
	}
	return 0
}

// mcpAnswer answers one of the client's requests other than a call of the
// elicit tool; initialize notes whether the client takes form
// elicitations (an empty elicitation capability is the form one, as MCP
// had it before URL elicitations).
func mcpAnswer(req mcpMessage, canElicit *bool) map[string]any {
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	switch req.Method {
	case "initialize":
		version := req.Params.ProtocolVersion
		if version == "" {
			version = "2025-06-18"
		}
		if e := req.Params.Capabilities.Elicitation; e != nil {
			*canElicit = e.Form != nil || e.URL == nil
		}
		resp["result"] = map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "aep-probe", "version": "1.0.0"},
		}
	case "ping":
		resp["result"] = map[string]any{}
	case "tools/list":
		tools := []any{map[string]any{
			"name":        MCPTool,
			"description": "Echo the given text back.",
			"inputSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"text": map[string]any{"type": "string"}},
				"required":   []any{"text"},
			},
		}}
		if *canElicit {
			tools = append(tools, map[string]any{
				"name":        MCPElicitTool,
				"description": "Deploy the service; asks the user for the deployment's settings first.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			})
		}
		resp["result"] = map[string]any{"tools": tools}
	case "tools/call":
		if req.Params.Name != MCPTool {
			resp["result"] = mcpText("unknown tool: "+req.Params.Name, true)
			break
		}
		text, _ := req.Params.Arguments["text"].(string)
		resp["result"] = mcpText(text, false)
	default:
		resp["error"] = map[string]any{"code": -32601, "message": "method not found: " + req.Method}
	}
	return resp
}

// elicitResult is the elicit tool's result for the client's answer: the
// action, and for accept the content's fields in key order, so the model
// (and a recording's check) reads exactly what came back.
func elicitResult(resp mcpMessage) map[string]any {
	switch {
	case resp.Error != nil:
		return mcpText(fmt.Sprintf("elicitation failed: %d %s", resp.Error.Code, resp.Error.Message), true)
	case resp.Result == nil:
		return mcpText("elicitation failed: an empty answer", true)
	case resp.Result.Action != "accept":
		return mcpText("elicitation "+resp.Result.Action+": nothing deployed", false)
	}
	b, _ := json.Marshal(resp.Result.Content) // map keys marshal sorted
	return mcpText("elicitation accept: "+strings.TrimSpace(string(b)), false)
}

// mcpText is a tools/call result of one text block.
func mcpText(text string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

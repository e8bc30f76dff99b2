package fakemodel

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// entry is one conversation item reduced to what scripting needs.
type entry struct {
	human     bool // a message the human typed
	assistant bool // produced by the model (text or tool call)
	userText  string
}

// parse reads the request body of api into a Request.
func parse(api API, path string, h http.Header, body []byte) Request {
	req := Request{API: api, Path: path, Header: h.Clone(), Body: body,
		Stream: gjson.GetBytes(body, "stream").Bool(), Model: gjson.GetBytes(body, "model").String()}
	var es []entry
	switch api {
	case Anthropic:
		es = anthropicEntries(body)
		for _, t := range gjson.GetBytes(body, "tools").Array() {
			req.Tools = append(req.Tools, t.Get("name").String())
		}
	case Responses:
		es = responsesEntries(body)
		collectNames(gjson.GetBytes(body, "tools"), &req.Tools)
	case Gemini:
		es = geminiEntries(body)
		for _, t := range gjson.GetBytes(body, "tools").Array() {
			for _, f := range t.Get("functionDeclarations").Array() {
				req.Tools = append(req.Tools, f.Get("name").String())
			}
		}
		if i := strings.Index(path, "/models/"); i >= 0 {
			m := path[i+len("/models/"):]
			if j := strings.IndexByte(m, ':'); j >= 0 {
				m = m[:j]
			}
			req.Model = m
		}
	case ChatCompletions:
		es = chatEntries(body)
		for _, t := range gjson.GetBytes(body, "tools").Array() {
			req.Tools = append(req.Tools, t.Get("function.name").String())
		}
	}
	last := -1
	for i, e := range es {
		if e.human {
			last = i
		}
	}
	if last >= 0 {
		req.Human = es[last].userText
		req.Marker = Marker(req.Human)
		inReply := false
		for _, e := range es[last+1:] {
			if e.assistant && !inReply {
				req.Round++
			}
			inReply = e.assistant
		}
	}
	if req.Marker == "" {
		for i := len(es) - 1; i >= 0 && req.Marker == ""; i-- {
			req.Marker = Marker(es[i].userText)
		}
	}
	return req
}

// collectNames gathers tool names from a Responses tools list, including
// tools nested in namespaces.
func collectNames(tools gjson.Result, out *[]string) {
	for _, t := range tools.Array() {
		if n := t.Get("name").String(); n != "" {
			*out = append(*out, n)
		}
		if sub := t.Get("tools"); sub.IsArray() {
			collectNames(sub, out)
		}
	}
}

// injected reports agent-injected context that rides as user text:
// system reminders, environment blocks, instructions, command wrappers.
func injected(text string) bool {
	t := strings.TrimSpace(text)
	return t == "" || strings.HasPrefix(t, "<system-reminder>") || strings.HasPrefix(t, "<environment_context>") ||
		strings.HasPrefix(t, "<user_instructions>") || strings.HasPrefix(t, "# AGENTS.md") ||
		strings.HasPrefix(t, "<permissions") || strings.HasPrefix(t, "<local-command") ||
		strings.HasPrefix(t, "<command-name>") || strings.HasPrefix(t, "Caveat:")
}

func anthropicEntries(body []byte) []entry {
	var es []entry
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		role := m.Get("role").String()
		c := m.Get("content")
		if role == "assistant" {
			es = append(es, entry{assistant: true})
			continue
		}
		if role == "system" {
			// Claude Code 2.1.332 sends its environment as a system message.
			continue
		}
		var texts []string
		toolResult := false
		if c.Type == gjson.String {
			texts = append(texts, c.String())
		}
		for _, b := range c.Array() {
			switch b.Get("type").String() {
			case "text":
				if !injected(b.Get("text").String()) {
					texts = append(texts, b.Get("text").String())
				}
			case "tool_result":
				toolResult = true
			}
		}
		text := strings.Join(texts, "\n")
		es = append(es, entry{human: !toolResult && text != "" && !injected(text), userText: text})
	}
	return es
}

func responsesEntries(body []byte) []entry {
	var es []entry
	input := gjson.GetBytes(body, "input")
	if input.Type == gjson.String {
		return []entry{{human: true, userText: input.String()}}
	}
	for _, it := range input.Array() {
		typ := it.Get("type").String()
		role := it.Get("role").String()
		switch {
		case typ == "message" && role == "assistant",
			typ == "function_call", typ == "custom_tool_call", typ == "local_shell_call", typ == "reasoning":
			es = append(es, entry{assistant: true})
		case strings.HasSuffix(typ, "_output"):
			es = append(es, entry{}) // a tool result ends the reply
		case (typ == "message" || typ == "") && role == "user":
			text := contentText(it.Get("content"))
			es = append(es, entry{human: text != "", userText: text})
		}
	}
	return es
}

func geminiEntries(body []byte) []entry {
	var es []entry
	for _, c := range gjson.GetBytes(body, "contents").Array() {
		if c.Get("role").String() == "model" {
			es = append(es, entry{assistant: true})
			continue
		}
		var texts []string
		fr := false
		for _, p := range c.Get("parts").Array() {
			if p.Get("functionResponse").Exists() {
				fr = true
			}
			if t := p.Get("text"); t.Exists() && !injected(t.String()) {
				texts = append(texts, t.String())
			}
		}
		text := strings.Join(texts, "\n")
		es = append(es, entry{human: !fr && text != "", userText: text})
	}
	return es
}

func chatEntries(body []byte) []entry {
	var es []entry
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		switch m.Get("role").String() {
		case "assistant":
			es = append(es, entry{assistant: true})
		case "tool":
			es = append(es, entry{}) // a tool result ends the reply
		case "user":
			text := contentText(m.Get("content"))
			es = append(es, entry{human: text != "" && !injected(text), userText: text})
		}
	}
	return es
}

// contentText is an OpenAI-style message content as text: the string, or
// its text parts that are not agent-injected context, one per line.
func contentText(c gjson.Result) string {
	var texts []string
	if c.Type == gjson.String {
		texts = append(texts, c.String())
	}
	for _, b := range c.Array() {
		if t := b.Get("text").String(); !injected(t) {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n")
}

// shape summarises a request's conversation as its item kinds, for the log.
func shape(api API, body []byte) string {
	var parts []string
	item := func(r gjson.Result) string {
		k := r.Get("role").String()
		if t := r.Get("type").String(); t != "" && t != "message" {
			k = t
		}
		return k
	}
	switch api {
	case Anthropic, ChatCompletions:
		for _, m := range gjson.GetBytes(body, "messages").Array() {
			parts = append(parts, item(m))
		}
	case Responses:
		for _, m := range gjson.GetBytes(body, "input").Array() {
			parts = append(parts, item(m))
		}
	case Gemini:
		for _, m := range gjson.GetBytes(body, "contents").Array() {
			parts = append(parts, item(m))
		}
	}
	return strings.Join(parts, ",")
}

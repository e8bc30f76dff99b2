package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// anthropic streams (or returns) a Messages API answer.
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	id := s.nextID()
	var content []any
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, c := range rep.Calls {
		cid := c.ID
		if cid == "" {
			cid = fmt.Sprintf("toolu_%02d%02d", id, i)
		}
		var args any = map[string]any{}
		json.Unmarshal([]byte(argsJSON(c)), &args)
		content = append(content, map[string]any{"type": "tool_use", "id": cid, "name": c.Name, "input": args})
	}
	stop := "end_turn"
	switch {
	case rep.Refuse:
		stop = "refusal"
	case len(rep.Calls) > 0:
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": rep.inputTokens(), "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": fmt.Sprintf("msg_fake%04d", id), "type": "message", "role": "assistant",
		"model": req.Model, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		msg["content"], msg["stop_reason"] = content, stop
		if content == nil {
			msg["content"] = []any{}
		}
		writeJSON(w, 200, msg)
		return
	}
	e := startSSE(w)
	msg["content"], msg["stop_reason"] = []any{}, nil
	e.event("message_start", map[string]any{"type": "message_start", "message": msg})
	if rep.Hang {
		e.event("ping", map[string]any{"type": "ping"})
		s.hang(r)
		return
	}
	for i, b := range content {
		blk := b.(map[string]any)
		switch blk["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": blk["text"]}})
		case "tool_use":
			in, _ := json.Marshal(blk["input"])
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": map[string]any{}}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses streams an OpenAI Responses API answer.
func (s *Server) responses(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	id := s.nextID()
	respID := fmt.Sprintf("resp_fake%04d", id)
	var items []map[string]any
	if rep.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake%04d", id), "role": "assistant",
			"status": "completed", "content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for i, c := range rep.Calls {
		cid := c.ID
		if cid == "" {
			cid = fmt.Sprintf("call_%02d%02d", id, i)
		}
		if c.Custom {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%02d%02d", id, i),
				"status": "completed", "call_id": cid, "name": c.Name, "input": c.Input})
			continue
		}
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d%02d", id, i),
			"status": "completed", "call_id": cid, "name": c.Name, "arguments": argsJSON(c)}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		items = append(items, item)
	}
	base := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "model": req.Model,
		"status": "in_progress", "output": []any{}}
	e := startSSE(w)
	seq := 0
	ev := func(typ string, kv map[string]any) {
		kv["type"], kv["sequence_number"] = typ, seq
		seq++
		e.event(typ, kv)
	}
	ev("response.created", map[string]any{"response": base})
	if rep.StreamFailed {
		failed := map[string]any{}
		for k, v := range base {
			failed[k] = v
		}
		failed["status"] = "failed"
		failed["error"] = map[string]any{"code": "server_error", "message": "scripted stream failure"}
		ev("response.failed", map[string]any{"response": failed})
		return
	}
	if rep.Hang {
		ev("response.in_progress", map[string]any{"response": base})
		s.hang(r)
		return
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		ev("response.output_item.added", map[string]any{"output_index": i, "item": it})
		if it["type"] == "message" {
			ev("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": rep.Text})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
		out = append(out, it)
	}
	done := map[string]any{}
	for k, v := range base {
		done[k] = v
	}
	done["status"], done["output"] = "completed", out
	done["usage"] = map[string]any{"input_tokens": rep.inputTokens(), "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120}
	ev("response.completed", map[string]any{"response": done})
}

// gemini streams (or returns) a generateContent answer.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	var parts []any
	if rep.Text != "" {
		parts = append(parts, map[string]any{"text": rep.Text})
	}
	for _, c := range rep.Calls {
		var args any = map[string]any{}
		json.Unmarshal([]byte(argsJSON(c)), &args)
		fc := map[string]any{"name": c.Name, "args": args}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		parts = append(parts, map[string]any{"functionCall": fc})
	}
	if parts == nil {
		parts = []any{map[string]any{"text": ""}}
	}
	finish := "STOP"
	if rep.Refuse {
		finish = "SAFETY"
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": finish, "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": rep.inputTokens(), "candidatesTokenCount": 20, "totalTokenCount": rep.inputTokens() + 20},
		"modelVersion":  req.Model,
	}
	if !req.Stream {
		writeJSON(w, 200, resp)
		return
	}
	e := startSSE(w)
	if rep.Hang {
		e.raw(": thinking\n\n")
		s.hang(r)
		return
	}
	if rep.Cut {
		e.event("", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model",
			"parts": []any{map[string]any{"text": half(rep.Text)}}}, "index": 0}}, "modelVersion": req.Model})
		cut()
	}
	e.event("", resp)
}

// half is the first half of text, for an answer cut mid-stream.
func half(text string) string { return text[:len(text)/2] }

// chat streams (or returns) a chat completions answer.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	id := s.nextID()
	cid := fmt.Sprintf("chatcmpl-fake%04d", id)
	created := time.Now().Unix()
	finish := "stop"
	switch {
	case rep.Refuse:
		finish = "content_filter"
	case len(rep.Calls) > 0:
		finish = "tool_calls"
	}
	var calls []any
	for i, c := range rep.Calls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%02d%02d", id, i)
		}
		calls = append(calls, map[string]any{"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
	}
	usage := map[string]any{"prompt_tokens": rep.inputTokens(), "completion_tokens": 20, "total_tokens": rep.inputTokens() + 20}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rep.Text}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		writeJSON(w, 200, map[string]any{"id": cid, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, fin any) {
		e.event("", map[string]any{"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if rep.Hang {
		s.hang(r)
		return
	}
	if rep.Cut {
		chunk(map[string]any{"content": half(rep.Text)}, nil)
		cut()
	}
	if rep.Text != "" {
		chunk(map[string]any{"content": rep.Text}, nil)
	}
	if calls != nil {
		chunk(map[string]any{"tool_calls": calls}, nil)
	}
	chunk(map[string]any{}, finish)
	e.event("", map[string]any{"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.Model,
		"choices": []any{}, "usage": usage})
	e.raw("data: [DONE]\n\n")
}

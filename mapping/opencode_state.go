package mapping

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// This file holds the bus tables' remembered structure: the todo snapshot
// diff and the question forms' choice labels (both kept as digests, never
// as content, in the table state).

// maxTodos bounds the todo snapshot kept in the state.
const maxTodos = 200

// todoItem is one remembered todo: its key (the vendor id, else a digest of
// its content with the occurrence among equal contents), its status and
// the label its events carry as subject.
type todoItem struct {
	Key    string `json:"k"`
	Status string `json:"s"`
	Label  string `json:"n"`
}

// diffTodos turns a todo.updated snapshot into transitions against the
// last one (the pins' diffTodos): an item not seen before is planned (and
// completed too when it arrives completed), an item turning completed is
// completed; removals and other churn stay silent. Items with an id are
// matched by id and carry it as subject; items without one (the servers
// today) are matched by content and position and carry a label numbered
// per session in order of first sight.
func diffTodos(st *State, todos []gjson.Result) []Draft {
	var prev []todoItem
	if s, ok := st.Get(busTodos); ok {
		json.Unmarshal([]byte(s), &prev)
	}
	old := make(map[string]todoItem, len(prev))
	for _, it := range prev {
		old[it.Key] = it
	}
	seq, _ := st.Get(busTodoSeq)
	n, _ := strconv.Atoi(seq)
	seen := map[string]int{}
	var next []todoItem
	var ds []Draft
	for _, t := range todos {
		if len(next) >= maxTodos {
			break
		}
		id := t.Get("id").String()
		key := "i:" + id
		if id == "" {
			c := redact.DigestJSON([]byte(t.Get("content").Raw))
			seen[c]++
			key = "c:" + c + "#" + strconv.Itoa(seen[c])
		}
		it := todoItem{Key: key, Status: t.Get("status").String()}
		was, known := old[key]
		switch {
		case known:
			it.Label = was.Label
		case id != "":
			it.Label = id
		default:
			n++
			it.Label = strconv.Itoa(n)
		}
		if !known {
			ds = append(ds, Draft{Type: "progress.task.planned", Subject: it.Label, Data: map[string]any{}})
		}
		if it.Status == "completed" && (!known || was.Status != "completed") {
			ds = append(ds, Draft{Type: "progress.task.completed", Subject: it.Label, Data: map[string]any{}})
		}
		next = append(next, it)
	}
	b, _ := json.Marshal(next)
	st.Set(busTodos, string(b))
	if n > 0 {
		st.Set(busTodoSeq, strconv.Itoa(n))
	}
	return ds
}

// questionForm is the form of a question request's questions (OpenCode's
// shape: multiple, custom) and the state entry naming each question's
// choices by label digest, for reading the answers back.
func questionForm(agent string, questions []byte) (data, meta map[string]any, labels string) {
	d, m, ls := questionsForm(agent, gjson.ParseBytes(questions).Array(), "multiple", "custom")
	digests := make([][]string, len(ls))
	for i, q := range ls {
		for _, l := range q {
			digests[i] = append(digests[i], redact.Digest(l))
		}
	}
	b, _ := json.Marshal(digests)
	return d, m, string(b)
}

// questionValues reads a question.replied's answers (one list of chosen
// labels per question) as answer values: the choice ids where the labels
// match the question's choices, the text where one does not (the free
// "other" answer). structural keeps only what is a choice id.
func questionValues(answers []gjson.Result, labels string) (values, structural map[string]any) {
	var digests [][]string
	json.Unmarshal([]byte(labels), &digests)
	values, structural = map[string]any{}, map[string]any{}
	for i, a := range answers {
		id := strconv.Itoa(i + 1)
		var choices []string
		if i < len(digests) {
			choices = digests[i]
		}
		var vals []any
		allChoices := true
		for _, pick := range a.Array() {
			text := pick.String()
			match := ""
			for j, d := range choices {
				if d == redact.Digest(text) {
					match = strconv.Itoa(j + 1)
					break
				}
			}
			if match == "" {
				allChoices = false
				vals = append(vals, text)
			} else {
				vals = append(vals, match)
			}
		}
		var v any = vals
		if len(vals) == 1 {
			v = vals[0]
		}
		if len(vals) == 0 {
			continue
		}
		values[id] = v
		if allChoices {
			structural[id] = v
		}
	}
	return values, structural
}

// sortByTouch orders state keys oldest touch first (then by name).
func sortByTouch(st *State, ks []string) {
	sort.Slice(ks, func(i, j int) bool {
		if st.Touch[ks[i]] != st.Touch[ks[j]] {
			return st.Touch[ks[i]] < st.Touch[ks[j]]
		}
		return ks[i] < ks[j]
	})
}

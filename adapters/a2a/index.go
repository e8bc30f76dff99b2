package a2a

import "sync"

// taskIndex remembers which context each task belongs to, for messages
// that name a task but not its context (a CancelTask, a GetTask, a status
// update an agent published without one). It holds at most max tasks;
// the oldest entry falls out first. Safe for concurrent use.
type taskIndex struct {
	mu    sync.Mutex
	max   int
	m     map[string]string
	order []string // insertion order, for eviction
}

func (t *taskIndex) init(max int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.max, t.m = max, make(map[string]string)
}

// get returns the context of task, "" when unknown.
func (t *taskIndex) get(task string) string {
	if task == "" {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[task]
}

// put records task's context.
func (t *taskIndex) put(task, ctx string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.max, t.m = maxTasks, make(map[string]string)
	}
	if _, ok := t.m[task]; !ok {
		t.order = append(t.order, task)
	}
	t.m[task] = ctx
	for len(t.m) > t.max && len(t.order) > 0 {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	if cap(t.order) > 4*t.max {
		t.order = append([]string(nil), t.order...)
	}
}

package shim

import (
	"io/fs"
	"os"
	"sync"
)

// keptFiles holds the files of the sessions written last open between
// writes, so that a long-running emitter (the OTLP receiver, the ACP tee)
// does not open, check and close a session's state file and log for every
// batch. Only the descriptor is kept, never a lock: a file waiting here is
// unlocked, so any other process, or another descriptor of this one, takes
// its lock as if it were closed. Whoever takes a file from here owns it
// until it gives it back, so two goroutines of one process never lock
// through one descriptor (flock would let the second in at once).
//
// A kept descriptor may no longer be the file at its path: the state file
// swept, the log rotated, either replaced by a link. So a file taken from
// here is used only after it is locked and its path checked to name it
// still (current); otherwise it is closed and the path opened afresh. A
// file just opened is checked the same way, as a sweep or rotation may
// come between its open and its lock.
//
// The zero value is empty and ready. It keeps at most keepFiles files; the
// least recently given back is closed first.
type keptFiles struct {
	mu    sync.Mutex
	files []keptFile // least recently given back first
}

// keptFile is a kept descriptor, the path it was opened at and what it
// was then.
type keptFile struct {
	path string
	f    *os.File
	fi   fs.FileInfo
}

// keepFiles bounds the descriptors one store or log keeps open: a
// receiver's batches mostly come from one or a few sessions, and the
// bound keeps an emitter that sees many sessions far from the process's
// descriptor limit.
const keepFiles = 8

// take returns the kept file of path and what it was when opened, or nil.
func (k *keptFiles) take(path string) (*os.File, fs.FileInfo) {
	if !keepOpen {
		return nil, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, kf := range k.files {
		if kf.path == path {
			k.files = append(k.files[:i], k.files[i+1:]...)
			return kf.f, kf.fi
		}
	}
	return nil, nil
}

// give keeps f, unlocked, as the file of path, which it was when fi was
// read; where files cannot be kept open it closes f.
func (k *keptFiles) give(path string, f *os.File, fi fs.FileInfo) {
	if !keepOpen {
		f.Close()
		return
	}
	var closing []*os.File
	k.mu.Lock()
	for i, kf := range k.files {
		if kf.path == path {
			// Another goroutine wrote the same session meanwhile through
			// a descriptor of its own: one is enough.
			closing = append(closing, kf.f)
			k.files = append(k.files[:i], k.files[i+1:]...)
			break
		}
	}
	if len(k.files) >= keepFiles {
		closing = append(closing, k.files[0].f)
		k.files = append(k.files[:0], k.files[1:]...)
	}
	k.files = append(k.files, keptFile{path, f, fi})
	k.mu.Unlock()
	for _, f := range closing {
		f.Close()
	}
}

// current reports whether path, looked at without following a link, is
// still the regular file fi describes, and returns what it is now. The
// caller holds the file's lock, so a writer that follows the lock
// discipline cannot change that between this look and the write.
func current(path string, fi fs.FileInfo) (fs.FileInfo, bool) {
	now, err := os.Lstat(path)
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(now, fi) {
		return nil, false
	}
	return now, true
}

package realagents

import (
	"os"
	"path/filepath"
)

// Sandbox is a recording's temporary root: Dir holds the agent's Home
// (with its workspace Work) and the aep-hook home (Dir/aep); Env is the
// environment of a process run there, which touches nothing of the user's.
type Sandbox struct {
	Dir, Home, Work string
	Env             []string
}

// NewSandbox makes the folders of a fresh sandbox under the temporary
// directory (prefix names it) and the environment that points into them.
func NewSandbox(prefix string) (Sandbox, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return Sandbox{}, err
	}
	s := Sandbox{Dir: dir, Home: filepath.Join(dir, "home"), Work: filepath.Join(dir, "home", "proj")}
	for _, d := range []string{s.Home, s.Work, filepath.Join(dir, "aep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			os.RemoveAll(dir)
			return Sandbox{}, err
		}
	}
	s.Env = []string{
		"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8",
		"TMPDIR=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.Home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
		"AEP_HOME=" + filepath.Join(dir, "aep"), "AEP_HOST=real-host",
		"NO_COLOR=1", "CI=", "NODE_NO_WARNINGS=1",
	}
	return s, nil
}

// Rewriter returns a rewriter of the sandbox's machine paths (the
// workspace, the home, the root), the user's real home and the host name.
func (s Sandbox) Rewriter() *Rewriter {
	rw := &Rewriter{}
	rw.Add(s.Work, "/home/user/proj")
	rw.Add(s.Home, "/home/user")
	rw.Add(s.Dir, "/tmp/real")
	if hd, err := os.UserHomeDir(); err == nil && len(hd) > 1 {
		rw.Add(hd+"/", "/home/user/")
	}
	if hn, err := os.Hostname(); err == nil && len(hn) >= 4 {
		rw.Add(hn, "host")
	}
	return rw
}

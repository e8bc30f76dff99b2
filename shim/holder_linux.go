//go:build linux

package shim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// holderStopped reports whether the process holding the flock on f is
// stopped (SIGSTOP, a job-control stop of the agent's process group) or
// gone, read from /proc/locks and the holder's /proc stat; ok is false when
// that cannot be told. A holder that is running, sleeping or exiting is
// making its way, however slowly on a loaded machine, and is waited for.
func holderStopped(f *os.File) (stopped, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false, false
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return false, false
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 28615 fe:00:9978147 0 EOF"; waiters
		// read "1: -> FLOCK ...".
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 6 || string(fields[1]) != "FLOCK" || string(fields[5]) != want {
			continue
		}
		proc := "/proc/" + string(fields[4])
		switch procState(proc + "/stat") {
		case 0:
			return false, false
		case '?':
			return true, true // gone: its lock goes with it, but not yet
		case 'T', 't':
			return true, true
		case 'Z', 'X':
			// The leader thread has exited, and the lock goes when the
			// last thread has (a Go process shows this for a while on its
			// way out): the holder is leaving unless a thread is stopped.
			tasks, err := os.ReadDir(proc + "/task")
			if err != nil {
				return true, true
			}
			for _, task := range tasks {
				if s := procState(proc + "/task/" + task.Name() + "/stat"); s == 'T' || s == 't' {
					return true, true
				}
			}
		}
		return false, true
	}
	return false, false
}

// procState reads a process's (or thread's) state from its /proc stat
// file: '?' when it is gone, 0 when the file does not parse.
func procState(path string) byte {
	stat, err := os.ReadFile(path)
	if err != nil {
		return '?'
	}
	// "pid (comm) S ...": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

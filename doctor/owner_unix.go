//go:build unix

package doctor

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// fileOwner names the user owning path ("" when it does not exist).
func fileOwner(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	uid := strconv.FormatUint(uint64(sys.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return u.Username + " (uid " + uid + ")"
	}
	return "uid " + uid
}

package deliver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Forget removes what home remembers of delivering to d: its cursors and
// its status (so reports stop listing it). The events it refused stay put
// aside in RejectedPath. Delivering to d again later starts from the
// beginning of every log (at-least-once: the same ids again).
func Forget(home string, d Destination) error {
	dir := filepath.Join(home, "cursors", d.Key())
	if _, err := os.Stat(filepath.Join(dir, "status.json")); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: nothing recorded for this destination in %s", d.Raw, home)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("forget %s: %w", d.Raw, err)
	}
	return nil
}

package realagents

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// DefaultCache is the install cache: AEP_REAL_CACHE, else
// ~/.cache/aep-hook/realagents (shared by every engineer's harness).
func DefaultCache() string {
	if c := os.Getenv("AEP_REAL_CACHE"); c != "" {
		return c
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "aep-hook-realagents")
	}
	return filepath.Join(home, ".cache", "aep-hook", "realagents")
}

// Install makes sure the agent's pinned package is in the cache
// (cache/<name>-<version>), installing it from the npm registry with the
// ordinary client when it is not.
func (h *Harness) Install(a *Agent) error {
	dir := filepath.Join(h.Cache, a.cacheDir())
	bin := filepath.Join(dir, "node_modules", ".bin", a.Bin)
	if _, err := os.Stat(bin); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(h.Log, "installing %s@%s into %s\n", a.Package, a.Version, dir)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, a.Package+"@"+a.Version)
	cmd.Stdout, cmd.Stderr = h.Log, h.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install %s@%s: %w", a.Package, a.Version, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s@%s installed no %s: %w", a.Package, a.Version, a.Bin, err)
	}
	return nil
}

// Binary is the aep-hook binary a harness runs: bin when given, else one
// built from the repository at root into the cache as name, suffixed by
// the checkout (another checkout's `make real` meanwhile builds its own
// and never replaces this one's mid-run).
func Binary(root, bin, cache, name string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	out := filepath.Join(cache, "bin", name+"-"+hex.EncodeToString(sum[:4]))
	cmd := exec.Command("go", "build", "-o", out, "./cmd/aep-hook")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build aep-hook: %w", err)
	}
	return out, nil
}

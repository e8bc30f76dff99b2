package realagents

import (
	"os"
	"path/filepath"
)

// useNodeRuntime installs the Node the Node-22 CLIs need (nodeRuntime) and
// puts it first on the agent's PATH.
func (r *Run) useNodeRuntime() error {
	if err := r.H.Install(nodeRuntime); err != nil {
		return err
	}
	node := filepath.Join(r.H.Cache, nodeRuntime.cacheDir(), "node_modules", ".bin")
	r.Setenv("PATH", node+string(os.PathListSeparator)+os.Getenv("PATH"))
	return nil
}

package deliver

import "os"

func truncate(p string) error      { return os.Truncate(p, 0) }
func rename(from, to string) error { return os.Rename(from, to) }

//go:build !unix

package doctor

// fileOwner is not known on this platform; the fallback path names the
// user already.
func fileOwner(string) string { return "" }

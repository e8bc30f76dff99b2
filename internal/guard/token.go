package guard

import (
	"io/fs"
	"os"

	"github.com/aep-hook/aep-hook/internal/secretfile"
)

// TokenFile is the name of the per-user token under AEP_HOME.
const TokenFile = secretfile.TokenFile

// UserToken returns the per-user listener token kept in home/token,
// creating it when missing (secretfile.UserToken).
func UserToken(home string) (string, error) { return secretfile.UserToken(home) }

// ReadSecretFile reads the first line of a file holding a secret
// (secretfile.Read).
func ReadSecretFile(path string) (string, error) { return secretfile.Read(path) }

// OpenSecretFile opens a file holding secrets after its checks
// (secretfile.Open).
func OpenSecretFile(path string) (*os.File, error) { return secretfile.Open(path) }

// SecretMode refuses a secret file that is a link, not regular, or
// readable by others (secretfile.Mode).
func SecretMode(path string, fi fs.FileInfo) error { return secretfile.Mode(path, fi) }

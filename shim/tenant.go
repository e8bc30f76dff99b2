package shim

import "errors"

// maxTenant bounds a tenant name.
const maxTenant = 63

// ValidTenant checks a tenant name: 1 to 63 of [a-z0-9._-], starting with
// a letter or digit. The name rides as the value of the extension attribute
// tenant (a JSON string, as AEP-0001 §5.4 requires of extension values); the
// narrow alphabet keeps it one exact, case-free namespace key, safe in a
// file name, a header or a log line, so a relay compares tenants by plain
// equality.
func ValidTenant(t string) error {
	if t == "" {
		return errors.New("tenant is empty")
	}
	if len(t) > maxTenant {
		return errors.New("tenant is longer than 63 characters")
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return errors.New("tenant must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
		}
	}
	return nil
}

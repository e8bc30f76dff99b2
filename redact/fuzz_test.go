package redact

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// plant builds a secret of one covered shape from fuzz bytes.
func plant(shape uint8, body []byte) (text, secret string) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	gen := func(alpha string, n int) string {
		b := make([]byte, n)
		for i := range b {
			c := byte(i * 7)
			if i < len(body) {
				c = body[i]
			}
			b[i] = alpha[int(c)%len(alpha)]
		}
		b[0] = '7' // a digit, so token-likeness checks hold
		return string(b)
	}
	switch shape % 15 {
	case 0:
		s := "ghp_" + gen(alnum, 36)
		return s, s
	case 1:
		s := "AKIA" + gen(upper, 16)
		return s, s
	case 2:
		s := gen(alnum, 12)
		return "password=" + s, s
	case 3:
		s := gen(alnum, 24)
		return "Authorization: Bearer " + s, s
	case 4:
		s := "eyJ" + gen(alnum, 10) + ".eyJ" + gen(alnum, 10) + "." + gen(alnum, 12)
		return s, s
	case 5:
		s := "sk-proj-" + gen(alnum, 40)
		return s, s
	case 6:
		s := gen(alnum, 10)
		return "postgres://u:" + s + "@db/x", s
	case 7:
		s := gen(alnum, 16)
		return `{"aws_secret_access_key": "` + s + `"}`, s
	case 9:
		s := gen(alnum, 12)
		return "mysql -u root -p" + s + " app", s
	case 10:
		s := gen(alnum, 12)
		return "sshpass -p " + s + " ssh host", s
	case 11:
		s := gen(alnum, 12)
		return "curl -u admin:" + s + " https://x", s
	case 12:
		s := "ghp_" + gen(alnum, 36)
		return "echo " + base64.StdEncoding.EncodeToString([]byte(s)) + " | base64 -d", base64.StdEncoding.EncodeToString([]byte(s))
	case 13:
		s := gen(alnum, 16)
		return "export API_TOKEN=ghp_" + gen(alnum, 20) + "\\\n" + s, s
	default:
		s := "MIIE" + gen(alnum, 40)
		return "-----BEGIN RSA PRIVATE KEY-----\\n" + s + "\\n-----END RSA PRIVATE KEY-----", s
	}
}

// FuzzText asserts redaction never panics, grows input by a bounded factor,
// and never lets a planted secret of a covered shape survive.
func FuzzText(f *testing.F) {
	f.Add("", "", uint8(0), []byte("abc"))
	f.Add("see", "ok", uint8(3), []byte{1, 2, 3})
	f.Add("token: a password=b", "mail x@y.com +1 415 555 0123", uint8(7), []byte("zz"))
	f.Add("/home/u/", "-----BEGIN X-----", uint8(8), []byte{})
	for _, seed := range []string{
		"the root password is Wq8!zT3#pL and", "Which token?\nVm4Qs8Lk2Xd6Rt0Bp3Hz7Nc1Jw5Fy9Ea (x)", "$ cat config/master.key\n246b56c0",
		"Cookie: sid=9f8e7d6c5b4a3928; theme=dark", "htpasswd -B -C 12 -b f u Lp0-Zx7*Wq (d)", "00000000: 786f 7870 2d35  xoxp-5\n",
		"786f78622d3733\n714c33", `"ghp_Rk4v" + "7hJ1dF5"`, "Private-Lines: 2\nbXs7\n", "IDENTIFIED BY 'Mv7\nxR9'",
		"cat > t/token <<'EOF'\nPnqwYo8\nEOF", "seed phrase: a b c d e", "https://u:p@h@x/", "PIN: 835172", "\\x50\\x34\\x73",
	} {
		f.Add(seed, seed[:len(seed)/2], uint8(len(seed)), []byte(seed))
	}
	p := NewPipeline(Options{Home: "/home/u"})
	f.Fuzz(func(t *testing.T, pre, post string, shape uint8, body []byte) {
		out := p.Text(pre + post)
		if len(out) > 4*len(pre+post)+32 {
			t.Fatalf("output grew from %d to %d bytes", len(pre+post), len(out))
		}
		text, secret := plant(shape, body)
		in := pre + "\n" + text + "\n" + post
		out = p.Text(in)
		if strings.Contains(out, secret) {
			t.Fatalf("planted secret survived (shape %d)", shape%15)
		}
	})
}

// FuzzName asserts [Name] never panics, bounds its output, and keeps what
// it does not replace in order: the name's structure.
func FuzzName(f *testing.F) {
	for _, seed := range []string{"mcp__gh_ghp_Xw8Lq2Zr5Tn9Vb1Mc4Kd7Hf0Js3Pa6Ye2Gu_create_issue", "https://svc:Vq3#mZ8p@mcp.x:8443/sse",
		"toolu_01AbCdEfGhIjKlMnOpQrStUv", "a requests permission: Bash", "attn:tool:Bash:1df8bccaec747dc615b50678f35bf5b5", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Name(s)
		if len(out) > 4*len(s)+32 {
			t.Fatalf("output grew from %d to %d bytes", len(s), len(out))
		}
		rest := strings.ReplaceAll(out, secretMark, "")
		j := 0 // the kept bytes are a subsequence of the input
		for i := 0; i < len(rest); i++ {
			for j < len(s) && s[j] != rest[i] {
				j++
			}
			if j == len(s) {
				t.Fatalf("Name(%q) = %q: not the input's bytes in order", s, out)
			}
			j++
		}
	})
}

// FuzzDownlevel asserts the down-leveler never panics on decoded input and
// never up-levels.
func FuzzDownlevel(f *testing.F) {
	f.Add([]byte(env("full", "attention.requested", `{"kind":"form","prompt":"p","fields":[{"id":"a","label":"L","choices":[{"label":"c"}]}]}`)), uint8(1))
	f.Add([]byte(env("redacted", "x.a.b.c", `{"a":[1,{"b":"c"}]}`)), uint8(2))
	f.Add([]byte(`{"aep":1}`), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, c uint8) {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		out, err := Downlevel(m, Level(c%4))
		if err != nil {
			return
		}
		got, _ := ParseLevel(stringOr(out["capture"], "metadata"))
		src, _ := ParseLevel(stringOr(m["capture"], "metadata"))
		if got > src {
			t.Fatalf("up-levelled %v to %v", src, got)
		}
	})
}

func stringOr(v any, d string) string {
	if s, ok := v.(string); ok {
		return s
	}
	return d
}

// TestMetadataCarriesNoFreeText is the property: whatever content a mapping
// puts in any field of any registered type, nothing gated at metadata
// carries a string of the original free text.
func TestMetadataCarriesNoFreeText(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reg := registry()
	n := 0
	free := func() string { n++; return "FREETEXT" + string(rune('a'+n%26)) }
	var fill func(fs fields) map[string]any
	value := func(f *field) any {
		switch {
		case f.items:
			k := 1 + rng.IntN(3)
			out := make([]any, k)
			for i := range out {
				out[i] = fill(f.props)
			}
			return out
		case f.props != nil:
			return fill(f.props)
		case f.star == starValues:
			return map[string]any{"a": free(), "b": float64(rng.IntN(9)), "c": []any{"id1"}}
		case f.level == Metadata && f.star == notStarred:
			return "struct" // structural token
		default:
			if rng.IntN(2) == 0 {
				return map[string]any{"k": free(), "l": []any{free()}}
			}
			return free()
		}
	}
	fill = func(fs fields) map[string]any {
		m := map[string]any{}
		for k, f := range fs {
			if rng.IntN(5) > 0 {
				m[k] = value(f)
			}
		}
		if _, ok := fs["id"]; ok && rng.IntN(2) == 0 {
			m["id"] = "id" + string(rune('0'+rng.IntN(9)))
		}
		return m
	}
	for round := 0; round < 50; round++ {
		for typ, fs := range reg {
			data := fill(fs)
			got, _ := Gate(Content{Type: typ, Agent: "a", Subject: "s", Data: data}, Metadata, nil)
			if b := Canonical(got); strings.Contains(string(b), "FREETEXT") {
				t.Fatalf("%s at metadata carries free text: %s", typ, b)
			}
			ev := map[string]any{"aep": "0.1", "id": "i", "type": typ, "time": "t", "source": "s", "agent": "a",
				"capture": "full", "data": data}
			dl, err := Downlevel(ev, Redacted)
			if err != nil {
				t.Fatal(err)
			}
			if b := Canonical(dl); strings.Contains(string(b), "FREETEXT") {
				t.Fatalf("%s down-levelled carries free text: %s", typ, b)
			}
		}
		x := map[string]any{"a": free(), "b": float64(1)}
		got, _ := Gate(Content{Type: "x.v.c.d", Data: x, Levels: map[string]Level{"b": Metadata}}, Metadata, nil)
		if strings.Contains(string(Canonical(got)), "FREETEXT") {
			t.Fatal("x.* at metadata carries free text")
		}
	}
}

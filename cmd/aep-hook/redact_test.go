package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func runCmd(t *testing.T, run func(*Streams) error, in string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(&Streams{In: strings.NewReader(in), Out: &out, Err: &errb})
	return out.String(), errb.String(), err
}

func TestRedactCmd(t *testing.T) {
	t.Setenv("AEP_TEST_SECRET", "v3ry-s3cret")
	tests := []struct {
		name string
		cmd  RedactCmd
		in   string
		want string
	}{
		{"text", RedactCmd{Home: "/home/op", SecretEnv: []string{"AEP_TEST_SECRET"}},
			"cd /home/op/x; password=hunter2; v3ry-s3cret; a@example.com <b>",
			"cd ~/x; password=[REDACTED:secret]; [REDACTED:secret]; [REDACTED:pii] <b>"},
		{"no pii", RedactCmd{Home: "/home/op", KeepPII: true}, "a@example.com", "a@example.com"},
		{"json", RedactCmd{Home: "/home/op", JSON: true},
			`{"token":"abc","n":12345678901234567890,"html":"<a&b>","cwd":"/home/op/p"}`,
			`{"cwd":"~/p","html":"<a&b>","n":12345678901234567890,"token":"[REDACTED:secret]"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, tt.cmd.Run, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Errorf("\n got %q\nwant %q", out, tt.want)
			}
		})
	}
	c := RedactCmd{Home: "/h", JSON: true}
	if _, _, err := runCmd(t, c.Run, `{"password":"hunter2"`); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestDownlevelCmd(t *testing.T) {
	ev := `{"data":{"args":{"c":"<x>"},"tool":{"name":"Bash"}},"aep":"0.1","id":"01J","type":"tool.requested","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":12345678901234567890,"capture":"full","xvendor":"<v>"}`
	in := ev + "\n\nnot json password=hunter2\n" + `{"aep":"0.1"}` + "\n" + ev
	c := DownlevelCmd{Ceiling: "redacted"}
	out, errs, err := runCmd(t, c.Run, in)
	var xe exitError
	if !errors.As(err, &xe) || xe.code != 1 {
		t.Fatalf("err %v, want exit status 1", err)
	}
	want := `{"aep":"0.1","id":"01J","type":"tool.requested","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":12345678901234567890,"capture":"metadata","xvendor":"<v>","data":{"tool":{"name":"Bash"}}}`
	if out != want+"\n"+want+"\n" {
		t.Errorf("stdout\n got %s\nwant %s", out, want)
	}
	if !strings.Contains(errs, "line 3") || !strings.Contains(errs, "line 4") || strings.Contains(errs, "hunter2") {
		t.Errorf("stderr %q", errs)
	}
	ok := DownlevelCmd{Ceiling: "full"}
	if _, _, err := runCmd(t, ok.Run, ev+"\n"); err != nil {
		t.Errorf("clean input: %v", err)
	}
	bad := DownlevelCmd{Ceiling: "loud"}
	if _, _, err := runCmd(t, bad.Run, ev); err == nil {
		t.Error("accepted a bad ceiling")
	}
}

// TestDownlevelCmdDistrustsClaims is the case: a free-text prompt
// on an event with no capture attribute, or one claiming metadata, does not
// survive `downlevel --ceiling metadata`; neither does free text in a list
// of answer values.
func TestDownlevelCmdDistrustsClaims(t *testing.T) {
	head := `{"aep":"0.1","id":"01J","type":"attention.requested","subject":"Bash","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/claude-code/session/s","agent":"claude-code","session":"s","seq":1`
	data := `"data":{"kind":"permission","prompt":"mysql -u root -pHUNTER2 prod"}}`
	answered := `{"aep":"0.1","id":"01K","type":"attention.answered","time":"2026-07-03T10:15:05.221Z","source":"aep://h/agent/claude-code/session/s","agent":"claude-code","session":"s","seq":2,"capture":"metadata","data":{"answer":{"values":{"1":["HUNTER2 is my pin"],"2":3}}}}`
	in := head + "," + data + "\n" + head + `,"capture":"metadata",` + data + "\n" + answered + "\n"
	c := DownlevelCmd{Ceiling: "metadata"}
	out, _, err := runCmd(t, c.Run, in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "HUNTER2") {
		t.Errorf("free text survived:\n%s", out)
	}
	want := `"capture":"metadata","data":{"kind":"permission","prompt":"claude-code requests permission: Bash"}}`
	if strings.Count(out, want) != 2 || !strings.Contains(out, `"values":{"2":3}`) {
		t.Errorf("stdout:\n%s", out)
	}
}

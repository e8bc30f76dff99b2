package shim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

func TestValidTenant(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"acme", true},
		{"acme-eu.1_a", true},
		{"0team", true},
		{strings.Repeat("a", 63), true},
		{"", false},
		{strings.Repeat("a", 64), false},
		{"Acme", false},
		{"-acme", false},
		{".acme", false},
		{"ac me", false},
		{"acme/eu", false},
		{"acmé", false},
		{"acme\n", false},
	} {
		if err := ValidTenant(tc.in); (err == nil) != tc.ok {
			t.Errorf("ValidTenant(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

// TestTenantStamped holds the emitter to stamping the tenant on every event,
// session- and agent-scoped, as the extension attribute tenant after the core
// attributes, and to leaving it out when none is configured.
func TestTenantStamped(t *testing.T) {
	for _, tenant := range []string{"acme", ""} {
		sink := &lines{}
		e := testEmitter(sink, NewMemStore())
		e.Tenant = tenant
		emit(t, e, `{"session":"s1","drafts":[{"Type":"run.started","Run":"r1"},{"Type":"agent.idle"}]}`)
		if len(sink.out) != 2 {
			t.Fatalf("got %d lines", len(sink.out))
		}
		for _, l := range sink.out {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			got, has := m["tenant"]
			if tenant == "" {
				if has {
					t.Errorf("no tenant configured, yet the event carries one: %s", l)
				}
				continue
			}
			if got != tenant {
				t.Errorf("tenant = %v, want %q: %s", got, tenant, l)
			}
			if strings.Index(l, `"tenant"`) < strings.Index(l, `"capture"`) {
				t.Errorf("tenant comes before the core attributes: %s", l)
			}
		}
	}
}

func TestTenantAttr(t *testing.T) {
	if v, err := (Config{Tenant: "acme"}).TenantAttr(); v != "acme" || err != nil {
		t.Errorf("valid tenant: %q %v", v, err)
	}
	if v, err := (Config{}).TenantAttr(); v != "" || err != nil {
		t.Errorf("no tenant: %q %v", v, err)
	}
	v, err := (Config{Tenant: "Not Valid"}).TenantAttr()
	if v != "" || err == nil || strings.Contains(err.Error(), "Not Valid") {
		t.Errorf("invalid tenant: %q %v (the error must name the variable, not echo the value)", v, err)
	}
	if em := (Config{Home: t.TempDir(), Tenant: "Not Valid"}).NewFileEmitter(redact.DefaultPolicy()); em.Tenant != "" {
		t.Errorf("an invalid tenant reached the emitter: %q", em.Tenant)
	}
	if em := (Config{Home: t.TempDir(), Tenant: "acme"}).NewFileEmitter(redact.DefaultPolicy()); em.Tenant != "acme" {
		t.Errorf("the configured tenant did not reach the emitter: %q", em.Tenant)
	}
}

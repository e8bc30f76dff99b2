// Package validate checks AEP events against AEP-0001 (envelope rules,
// (epoch, seq) order, cause and subject references, one terminal per run
// and per request) and the AEP-0002 payload schemas with their
// x-aep-capture levels (no field above the event's capture). Each
// violation names the line and the rule.
package validate

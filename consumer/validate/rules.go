package validate

// rule is one rule of the specification a problem breaks: where it is
// stated (the most specific section and item) and what it says, in a few
// words, so a reader of the message need not open the spec to know what
// was broken.
type rule struct{ cite, says string }

// The rules validate checks. Each check reports one of them.
var (
	rEvent         = rule{"AEP-0001 §5", "an event is one JSON object"}
	rJSONL         = rule{"AEP-0003 §3.1", "JSONL carries one event per line"}
	rNull          = rule{"AEP-0001 §5.1", "absent optional attributes are omitted, never null"}
	rRequired      = rule{"AEP-0001 §5.1", "aep, id, type, time, source and agent are required"}
	rExtName       = rule{"AEP-0001 §5.4", "extension attribute names are [a-z0-9]{1,20}"}
	rExtValue      = rule{"AEP-0001 §5.4", "extension attribute values are strings, integers or booleans"}
	rSeverity      = rule{"AEP-0001 §8.1", "severity is debug, info, notice, warning, error or critical"}
	rCaptureSet    = rule{"AEP-0001 §8.2", "capture is none, metadata, redacted or full"}
	rCaptureNone   = rule{"AEP-0001 §8.2", "capture none is the envelope only"}
	rCaptureField  = rule{"AEP-0001 §8.2(a)", "data honours the event's capture: no field above its level (AEP-0002 §5.1)"}
	rTypeName      = rule{"AEP-0001 §6", "types are lowercase {category}.{rest}; vendor types x.{vendor}.{category}.{rest}"}
	rCategory      = rule{"AEP-0002 §3", "the categories are a closed set"}
	rCoreType      = rule{"AEP-0001 §10", "every type is a registered core type or a legal x.{vendor}.* extension"}
	rAgentScope    = rule{"AEP-0001 §5.2", "agent-scoped events omit session, run, step and seq"}
	rSessionScope  = rule{"AEP-0001 §5.2", "session-scoped events carry session and seq"}
	rCommand       = rule{"AEP-0004 §2.2", "commands carry the target session and omit seq"}
	rRouted        = rule{"AEP-0002 §7.3", "attention.routed carries session and omits seq (a foreign emitter)"}
	rFieldSpec     = rule{"AEP-0002 §5.2", "field_spec: choices are required when type is select"}
	rIDUnique      = rule{"AEP-0001 §5.1 #2", "id is unique per emitter (source): a redelivery repeats the event unchanged"}
	rPosition      = rule{"AEP-0001 §7.2", "one (epoch, seq) position holds one event"}
	rRegress       = rule{"AEP-0001 §7.2", "positions never regress within a session; an epoch is never reused"}
	rCause         = rule{"AEP-0001 §5.1 #13", "cause is the id of an earlier event of the session"}
	rSubject       = rule{"AEP-0002 §7.1", "attention follow-ups set subject to the attention.requested id"}
	rAttnEnd       = rule{"AEP-0002 §7.2", "an attention request reaches one terminal (attention.resolved or attention.timeout)"}
	rPendingEnd    = rule{"AEP-0002 §7.2", "pending attention requests are closed before session.ended"}
	rRunEnd        = rule{"AEP-0002 §2 convention 5", "a run reaches at most one terminal"}
	rRunNamed      = rule{"AEP-0002 §2 convention 1", "a run terminal carries the run it ends"}
	rSessionEnd    = rule{"AEP-0002 §2 convention 5", "a session ends at most once"}
	rOpenRun       = rule{"AEP-0002 §2 convention 1", "a started run ends with run.finished, run.failed or run.cancelled (zero terminals is legal)"}
	rAck           = rule{"AEP-0004 §3", "one ack decision per command; a redelivered command gets the recorded ack again"}
	rAckCause      = rule{"AEP-0004 §3", "an ack's cause is the command's id"}
	rValues        = rule{"AEP-0002 §5.3", "attention.answered values answer the form's fields by their types (AEP-0006)"}
	rValuesCapture = rule{"AEP-0002 §5.3", "free-text form values (string fields, other answers) are redacted-level (AEP-0006)"}
	rLost          = rule{"AEP-0001 §7.2", "gaps are legal, but a complete session holds no moment its adapter marked lost (error.raised, code moment_lost)"}
)

// attrRules are the per-attribute rules of the AEP-0001 §5.1 table.
var attrRules = map[string]rule{
	"aep":         {"AEP-0001 §5.1 #1", "aep is the envelope's version: this validator checks \"0.1\""},
	"id":          {"AEP-0001 §5.1 #2", "id is a non-empty string"},
	"type":        {"AEP-0001 §5.1 #3", "type is a non-empty string"},
	"subject":     {"AEP-0001 §5.1 #4", "subject is a non-empty string"},
	"time":        {"AEP-0001 §5.1 #5", "time is an RFC 3339 timestamp with a timezone"},
	"source":      {"AEP-0001 §5.1 #6", "source is a URI"},
	"agent":       {"AEP-0001 §5.1 #7", "agent is a non-empty string"},
	"session":     {"AEP-0001 §5.1 #8", "session is a non-empty string"},
	"run":         {"AEP-0001 §5.1 #9", "run is a non-empty string"},
	"step":        {"AEP-0001 §5.1 #10", "step is a non-empty string"},
	"seq":         {"AEP-0001 §5.1 #11", "seq is an integer >= 0"},
	"epoch":       {"AEP-0001 §5.1 #12", "epoch is an integer >= 0"},
	"cause":       {"AEP-0001 §5.1 #13", "cause is a non-empty string"},
	"traceparent": {"AEP-0001 §5.1 #14", "traceparent is a W3C Trace Context value"},
	"severity":    rSeverity,
	"capture":     rCaptureSet,
	"data":        {"AEP-0001 §5.1 #17", "data is an object"},
}

// payloadRule is the rule of typ's payload schema: the mandatory types'
// schemas are AEP-0002 §5.3, the optional ones' §5.4.
func payloadRule(typ string, spec *typeSpec) rule {
	cite := "AEP-0002 §5.3"
	if spec != nil && spec.status != "mandatory" {
		cite = "AEP-0002 §5.4"
	}
	return rule{cite, "the " + typ + " payload schema"}
}

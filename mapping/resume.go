package mapping

import "strconv"

// Resumes. A vendor that resumes a session keeps its session id (Claude
// Code --resume, codex exec resume, Gemini CLI and Qwen Code --resume), but
// an AEP session ends once (AEP-0002 §2 convention 5): a session.started
// after its session.ended, and a second session.ended, would break the
// record. So a resume starts a new AEP session, named after the vendor's
// ("{vendor id}~r{nonce}"), whose session.started says trigger "resume"
// and names the AEP session it continues in resumed_from (a member the
// schema does not name, so metadata: AEP-0002 §5.1 rule 4). Every later
// moment of the vendor session goes to the new AEP session (Draft.Session)
// until the next resume. The earlier session keeps what it had: it ended,
// or it stays open when the vendor never said it ended (zero terminals is
// legal), and a run it left open is not drained into the new one.
//
// Every resume is a new session, whether or not its predecessor's end was
// seen: the table state that would say so is pruned by recency, and a
// session.started in a session that already ended is the one thing the
// record must never hold.

// stateAEPSession is the table-state key of the AEP session the vendor
// session's moments go to after a resume ("" or absent: the vendor's id).
const stateAEPSession = "aep.session"

// mapFunc is a table's Vendor.Map.
type mapFunc = func(Moment, *State) ([]Draft, error)

// resumable wraps a Claude-Code-shaped table (SessionStart with a source;
// the session id in sessionField) with the resume rule above.
func resumable(sessionField string, fn mapFunc) mapFunc {
	return func(m Moment, st *State) ([]Draft, error) {
		from := ""
		if HookField(m, "hook_event_name") == "SessionStart" && Str(m.Raw, "source") == "resume" {
			if vendor := Str(m.Raw, sessionField); vendor != "" {
				if early, ok := st.Get(stateResumedFrom); ok {
					// The table began the new session at an earlier moment
					// of the resumed process (resumeEarly).
					from = early
					st.Del(stateResumedFrom)
				} else {
					from = beginResume(m, st, vendor)
				}
			}
		}
		ds, err := fn(m, st)
		if err != nil {
			return ds, err
		}
		session := aepSession(st)
		for i := range ds {
			if ds[i].Session == "" {
				ds[i].Session = session
			}
			if from != "" && ds[i].Type == "session.started" {
				ds[i].Data = withData(ds[i], "trigger", "resume", "resumed_from", from).Data
			}
		}
		return ds, nil
	}
}

// stateResumedFrom holds, between resumeEarly and the SessionStart{resume}
// that follows it, the AEP session the new one continues.
const stateResumedFrom = "aep.resumed_from"

// beginResume starts the new AEP session continuing vendor session vendor
// and returns the AEP session it continues: fresh table state (nothing the
// earlier session left open belongs to the new one) naming the new session.
func beginResume(m Moment, st *State, vendor string) string {
	from := firstNonEmpty(aepSession(st), vendor)
	suffix := m.Nonce
	if suffix == "" {
		// A bare Map call without a nonce: a deterministic stand-in.
		suffix = strconv.FormatUint(st.Clock+1, 10)
	}
	*st = State{}
	st.SetOwn(stateAEPSession, vendor+"~r"+suffix)
	return from
}

// resumeEarly begins the resume at a moment of the resumed process that
// comes before its SessionStart{resume} (Qwen Code loads its instructions
// first), so that moment already goes to the new AEP session; the
// SessionStart then states the session without starting another.
func resumeEarly(m Moment, st *State, vendor string) {
	st.SetOwn(stateResumedFrom, beginResume(m, st, vendor))
}

// aepSession is the AEP session a resumed vendor session's moments go to,
// "" when they go to the vendor's own id.
func aepSession(st *State) string {
	s, _ := st.getOwn(stateAEPSession)
	return s
}

package otlp

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
)

// The OTLP response bodies, written by hand so the default build links no
// generated protobuf or gRPC code (opentelemetry-proto collector/logs/v1 and
// google/rpc/status.proto).

func appendTag(b []byte, field int, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// exportResponse encodes an Export{Logs,Trace,Metrics}ServiceResponse: empty
// for full success, else field 1 partial_success {1: rejected (int64),
// 2: error_message}. The three signals share this layout.
func exportResponse(asJSON bool, rejectedKey string, rejected int64, msg string) []byte {
	if asJSON {
		if rejected == 0 && msg == "" {
			return []byte("{}")
		}
		ps := map[string]any{}
		if rejected != 0 {
			ps[rejectedKey] = strconv.FormatInt(rejected, 10) // proto3 JSON int64
		}
		if msg != "" {
			ps["errorMessage"] = msg
		}
		b, _ := json.Marshal(map[string]any{"partialSuccess": ps})
		return b
	}
	if rejected == 0 && msg == "" {
		return []byte{}
	}
	var inner []byte
	if rejected != 0 {
		inner = appendTag(inner, 1, wireVarint)
		inner = binary.AppendUvarint(inner, uint64(rejected))
	}
	if msg != "" {
		inner = appendBytesField(inner, 2, []byte(msg))
	}
	return appendBytesField(nil, 1, inner)
}

// rpcStatus encodes a google.rpc.Status {1: code, 2: message}, the body of
// OTLP/HTTP error responses.
func rpcStatus(asJSON bool, code int32, msg string) []byte {
	if asJSON {
		b, _ := json.Marshal(struct {
			Code    int32  `json:"code"`
			Message string `json:"message,omitempty"`
		}{code, msg})
		return b
	}
	var b []byte
	if code != 0 {
		b = appendTag(b, 1, wireVarint)
		b = binary.AppendUvarint(b, uint64(uint32(code)))
	}
	if msg != "" {
		b = appendBytesField(b, 2, []byte(msg))
	}
	return b
}

// gRPC status codes used in error bodies (google.golang.org/grpc/codes).
const (
	codeInvalidArgument   int32 = 3
	codeResourceExhausted int32 = 8
	codeUnavailable       int32 = 14
	codeUnimplemented     int32 = 12
)

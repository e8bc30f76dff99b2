module github.com/aep-hook/aep-hook

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/tidwall/gjson v1.20.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

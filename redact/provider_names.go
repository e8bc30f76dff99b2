package redact

// providerWords are the provider names that make an assignment's value a
// credential when it looks random, whatever else the name says: gitleaks'
// "semi-generic" rules (the facts, not its text; see providers.go for its
// licence) cover these providers by name, and so does providerNameRules' rule.
var providerWords = []string{
	"adafruit", "adobe", "airtable", "algolia", "alibaba", "asana", "atlassian", "confluence",
	"jira", "beamer", "bitbucket", "bittrex", "meraki", "cloudflare", "codecov", "cohere",
	"co_api_key", "coinbase", "confluent", "contentful", "datadog", "dnkey", "discord",
	"droneci", "dropbox", "etsy", "facebook", "fastly", "finicity", "finnhub", "flickr",
	"freshbooks", "gitter", "gocardless", "heroku", "hubspot", "intercom", "jfrog",
	"artifactory", "bintray", "xray", "kraken", "kucoin", "launchdarkly", "linear", "linkedin",
	"linked_in", "linked-in", "looker", "mailchimp", "mailgun", "mapbox", "mattermost",
	"messagebird", "message_bird", "message-bird", "newrelic", "new_relic", "new-relic",
	"nytimes", "newyorktimes", "okta", "plaid", "privateai", "private_ai", "private-ai",
	"rapidapi", "sendbird", "sentry", "snyk", "sonar", "squarespace", "sumo", "telegr",
	"travis", "twitch", "twitter", "typeform", "yandex", "zendesk", "contribsys",
	"sourcegraph", "lob_", "_lob", "gitlab", "github", "slack", "stripe", "twilio", "openai",
	"anthropic", "vercel", "netlify", "supabase", "firebase", "azure", "gcp", "digitalocean",
}

// providerValue reports whether v is the value shape a provider name
// carries: one token of at least 12 bytes that looks random, or a long
// digit run (client ids).
func providerValue(v string) bool {
	if len(v) < 12 {
		return false
	}
	digits := 0
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) {
			digits++
		}
	}
	if digits == len(v) {
		return len(v) >= 14 && entropy(v) >= 2
	}
	return randomLike(v)
}

// providerNameRules holds the rule that redacts a random-looking value
// assigned to a name that holds a provider's name (DISCORD_CLIENT=...,
// heroku: <uuid>, asana_id: <16 digits>), laid out as data by the
// compiler as the other tables are.
var providerNameRules = []rule{{
	id:       "provider-name-assignment",
	keywords: providerWords,
	scan:     scanProviderName,
}}

func scanProviderName(s string, i, k int, _ *compiledRule) []span {
	a, ok := assignAt(s, i, k)
	if !ok || placeholder(s, a.key, a.value, a.quote) || !providerValue(s[a.value.start:a.value.end]) {
		return nil
	}
	return []span{a.value}
}

// vaultLike vets a legacy Vault token (s.XXXX): letters of both cases and
// a digit.
func vaultLike(v string) bool {
	var up, low bool
	for i := 0; i < len(v); i++ {
		up = up || v[i] >= 'A' && v[i] <= 'Z'
		low = low || v[i] >= 'a' && v[i] <= 'z'
	}
	return up && low && hasDigit(v)
}

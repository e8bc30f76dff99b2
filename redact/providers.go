// Provider token rules. The provider facts (prefixes, alphabets, nominal
// lengths) follow gitleaks' default rule set (v8.30.1), widened so a vendor
// that changes a token's length is still caught; the rules are the
// project's own. gitleaks' licence:
//
// MIT License
//
// Copyright (c) 2019 Zachary Rice
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

package redact

import "strings"

// providerTokenRules are the bare tokens of provider families, each behind
// the literal prefix that makes it cheap to find; providerNameRule adds the
// names that carry a provider's name (DISCORD_CLIENT=..., heroku: <uuid>).
// A package variable rather than a literal built per call: the compiler
// lays it out as data, where building it cost every hook process that
// redacts.
var providerTokenRules = []rule{
	{
		id: "1password", keywords: []string{"a3-", "ops_ey"},
		pattern: `\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b|\bops_eyJ[A-Za-z0-9+/_\-]{100,}={0,3}`,
		back:    1, fwd: 300,
	},
	{
		id: "adobe-client-secret", keywords: []string{"p8e-"},
		pattern: `(?i)\bp8e-[A-Za-z0-9]{28,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "age-secret-key", keywords: []string{"age-secret-key-1"},
		pattern: `\bAGE-SECRET-KEY-1[A-Z0-9]{50,64}`,
		back:    1, fwd: 300,
	},
	{
		id: "airtable-pat", keywords: []string{"pat"},
		pattern: `\bpat[A-Za-z0-9]{12,16}\.[a-f0-9]{56,}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "alibaba-access-key-id", keywords: []string{"ltai"},
		pattern: `(?i)\bLTAI[A-Za-z0-9]{12,30}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "artifactory", keywords: []string{"akcp", "cmvmd"},
		pattern: `\bAKCp[A-Za-z0-9]{60,}\b|\bcmVmd[A-Za-z0-9]{50,}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "atlassian-api-token", keywords: []string{"atatt3"},
		pattern: `\bATATT3[A-Za-z0-9_\-=]{150,}`,
		back:    1, fwd: 300,
	},
	{
		id: "authress-access-key", keywords: []string{".acc_", ".acc-"},
		pattern: `\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,}`,
		back:    80, fwd: 300,
	},
	{
		id: "aws-access-key-id", keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
		pattern: `\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{14,20}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "aws-bedrock-api-key", keywords: []string{"absk", "bedrock-api-key-"},
		pattern: `\bABSK[A-Za-z0-9+/]{80,}={0,2}|\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_\-]*`,
		back:    1, fwd: 300,
	},
	{
		id: "azure-ad-client-secret", keywords: []string{"q~"},
		pattern: `(?:^|[\\'"\x60\s>=:(,)])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{28,40})`,
		back:    5, fwd: 300,
		groups: []int{1},
	},
	{
		id: "clickhouse-cloud-key", keywords: []string{"4b1d"},
		pattern: `(?i)\b4b1d[A-Za-z0-9]{34,44}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "clojars-token", keywords: []string{"clojars_"},
		pattern: `(?i)\bCLOJARS_[a-z0-9]{50,}`,
		back:    1, fwd: 300,
	},
	{
		id: "cloudflare-origin-ca-key", keywords: []string{"v1.0-"},
		pattern: `\bv1\.0-[a-f0-9]{24}-[a-f0-9]{140,}`,
		back:    1, fwd: 300,
	},
	{
		id: "databricks-token", keywords: []string{"dapi"},
		pattern: `\bdapi[a-f0-9]{30,40}(?:-\d)?`,
		back:    1, fwd: 300,
	},
	{
		id: "digitalocean-token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
		pattern: `(?i)\bdo[opr]_v1_[a-f0-9]{60,}`,
		back:    1, fwd: 300,
	},
	{
		id: "doppler-token", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."},
		pattern: `(?i)\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{36,50}`,
		back:    1, fwd: 300,
	},
	{
		id: "duffel-token", keywords: []string{"duffel_"},
		pattern: `(?i)\bduffel_(?:test|live)_[A-Za-z0-9_\-=]{38,50}`,
		back:    1, fwd: 300,
	},
	{
		id: "dynatrace-token", keywords: []string{"dt0c01."},
		pattern: `(?i)\bdt0c01\.[A-Za-z0-9]{20,28}\.[A-Za-z0-9]{56,}`,
		back:    1, fwd: 300,
	},
	{
		id: "easypost-token", keywords: []string{"ezak", "eztk"},
		pattern: `(?i)\bEZ[AT]K[A-Za-z0-9]{48,60}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "facebook-page-token", keywords: []string{"eaam", "eaac"},
		pattern: `\bEAA[MC][A-Za-z0-9]{80,}`,
		back:    1, fwd: 300,
	},
	{
		id: "facebook-app-token", keywords: []string{"facebook", "%7c"},
		pattern: `\b\d{15,16}(?:\||%7[Cc])[0-9A-Za-z\-_]{27,40}`,
		back:    512, fwd: 512,
	},
	{
		id: "flutterwave-key", keywords: []string{"flwseck", "flwpubk"},
		pattern: `(?i)\bFLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{10,}(?:-X)?`,
		back:    1, fwd: 300,
	},
	{
		id: "flyio-token", keywords: []string{"fo1_", "fm1a_", "fm1r_", "fm2_"},
		pattern: `\bfo1_[\w\-]{38,50}|\bfm[12][ar]?_[A-Za-z0-9+/]{80,}={0,3}`,
		back:    1, fwd: 300,
	},
	{
		id: "frameio-token", keywords: []string{"fio-u-"},
		pattern: `(?i)\bfio-u-[A-Za-z0-9\-_=]{56,}`,
		back:    1, fwd: 300,
	},
	{
		id: "gcp-api-key", keywords: []string{"aiza"},
		pattern: `\bAIza[\w\-]{30,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		pattern: `\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,})`,
		back:    1, fwd: 300,
	},
	{
		id: "gitlab-token", keywords: []string{"glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glcbt-", "glffct-", "glimt-", "glagent-", "gloas-", "glwt-", "gr1348941", "_gitlab_session="},
		pattern: `\bgl(?:pat|ptt|rt|dt|ft|soat|cbt|ffct|imt|agent|oas|wt)-[0-9A-Za-z_.\-]{16,}|\bGR1348941[\w\-]{16,40}|_gitlab_session=[0-9a-z]{28,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "grafana-token", keywords: []string{"eyjrijoi", "glc_", "glsa_"},
		pattern: `(?i)\beyJrIjoi[A-Za-z0-9]{60,}={0,3}|\bglc_[A-Za-z0-9+/]{28,}={0,3}|\bglsa_[A-Za-z0-9]{28,36}_[A-Fa-f0-9]{8}`,
		back:    1, fwd: 300,
	},
	{
		id: "harness-token", keywords: []string{"pat.", "sat."},
		pattern: `\b(?:pat|sat)\.[A-Za-z0-9_\-]{18,26}\.[A-Za-z0-9]{20,28}\.[A-Za-z0-9]{16,24}`,
		back:    1, fwd: 300,
	},
	{
		id: "hashicorp-tf-token", keywords: []string{"atlasv1"},
		pattern: `\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{56,}`,
		back:    20, fwd: 300,
	},
	{
		id: "heroku-token-v2", keywords: []string{"hrku-"},
		pattern: `\bHRKU-AA[0-9A-Za-z_\-]{50,}`,
		back:    1, fwd: 300,
	},
	{
		id: "huggingface-token", keywords: []string{"hf_", "api_org_"},
		pattern: `(?i)\b(?:hf_|api_org_)[A-Za-z0-9]{30,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "infracost-token", keywords: []string{"ico-"},
		pattern: `\bico-[A-Za-z0-9]{28,36}`,
		back:    1, fwd: 300,
	},
	{
		id: "intra42-secret", keywords: []string{"s-s4t2"},
		pattern: `(?i)\bs-s4t2(?:ud|af)-[a-f0-9]{56,}`,
		back:    1, fwd: 300,
	},
	{
		id: "linear-token", keywords: []string{"lin_api_", "lin_oauth_"},
		pattern: `(?i)\blin_(?:api|oauth)_[A-Za-z0-9]{36,48}`,
		back:    1, fwd: 300,
	},
	{
		id: "mailchimp-key", keywords: []string{"-us"},
		pattern: `\b[a-f0-9]{32}-us\d{1,2}\b`,
		back:    34, fwd: 300,
	},
	{
		id: "mailgun-key", keywords: []string{"key-", "pubkey-"},
		pattern: `\b(?:pub)?key-[a-f0-9]{32}\b|\b[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "mapbox-token", keywords: []string{"pk.", "sk.", "tk."},
		pattern: `\b[pst]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{16,}|\b[ps]k\.[A-Za-z0-9]{50,}\.[A-Za-z0-9]{18,26}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "maxmind-license-key", keywords: []string{"_mmk"},
		pattern: `\b[A-Za-z0-9]{6}_[A-Za-z0-9]{26,32}_mmk\b`,
		back:    45, fwd: 300,
	},
	{
		id: "teams-webhook", keywords: []string{"webhook.office.com", "logic.azure.com"},
		pattern: `https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_\-]{40,}|https://[a-z0-9\-.]+\.logic\.azure\.com[:0-9]*/workflows/[^\s'\"]+`,
		back:    64, fwd: 300,
	},
	{
		id: "newrelic-key", keywords: []string{"nrjs-", "nrii-", "nrak-", "nraa-"},
		pattern: `\bNR(?:JS|II|AK|AA)-[A-Za-z0-9\-]{19,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "notion-token", keywords: []string{"ntn_", "secret_"},
		pattern: `\bntn_[0-9]{11}[A-Za-z0-9]{30,40}|\bsecret_[A-Za-z0-9]{40,46}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "npm-token", keywords: []string{"npm_"},
		pattern: `(?i)\bnpm_[A-Za-z0-9]{30,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "octopus-deploy-key", keywords: []string{"api-"},
		pattern: `\bAPI-[A-Z0-9]{22,32}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "openshift-token", keywords: []string{"sha256~"},
		pattern: `\bsha256~[\w\-]{38,50}`,
		back:    1, fwd: 300,
	},
	{
		id: "perplexity-key", keywords: []string{"pplx-"},
		pattern: `\bpplx-[A-Za-z0-9]{40,56}`,
		back:    1, fwd: 300,
	},
	{
		id: "planetscale-token", keywords: []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"},
		pattern: `(?i)\bpscale_(?:tkn|pw|oauth)_[\w=.\-]{28,}`,
		back:    1, fwd: 300,
	},
	{
		id: "postman-key", keywords: []string{"pmak-"},
		pattern: `(?i)\bPMAK-[A-Fa-f0-9]{20,28}-[A-Fa-f0-9]{30,38}`,
		back:    1, fwd: 300,
	},
	{
		id: "prefect-key", keywords: []string{"pnu_"},
		pattern: `\bpnu_[A-Za-z0-9]{32,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "pulumi-token", keywords: []string{"pul-"},
		pattern: `(?i)\bpul-[a-f0-9]{36,44}`,
		back:    1, fwd: 300,
	},
	{
		id: "pypi-token", keywords: []string{"pypi-ageichlwas5vcmc"},
		pattern: `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`,
		back:    1, fwd: 300,
	},
	{
		id: "readme-key", keywords: []string{"rdme_"},
		pattern: `(?i)\brdme_[a-z0-9]{60,}`,
		back:    1, fwd: 300,
	},
	{
		id: "rubygems-key", keywords: []string{"rubygems_"},
		pattern: `(?i)\brubygems_[a-f0-9]{40,56}`,
		back:    1, fwd: 300,
	},
	{
		id: "scalingo-token", keywords: []string{"tk-us-"},
		pattern: `\btk-us-[\w\-]{40,56}`,
		back:    1, fwd: 300,
	},
	{
		id: "sendgrid-key", keywords: []string{"sg."},
		pattern: `(?i)\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,}|\bSG\.[A-Za-z0-9=_\-.]{60,}`,
		back:    1, fwd: 300,
	},
	{
		id: "sendinblue-key", keywords: []string{"xkeysib-", "xsmtpsib-"},
		pattern: `(?i)\bx(?:keysib|smtpsib)-[a-f0-9]{60,}-[A-Za-z0-9]{14,20}`,
		back:    1, fwd: 300,
	},
	{
		id: "sentry-token", keywords: []string{"sntrys_", "sntryu_"},
		pattern: `\bsntry[su]_[A-Za-z0-9+/=_]{40,}`,
		back:    1, fwd: 300,
	},
	{
		id: "settlemint-token", keywords: []string{"sm_aat_", "sm_pat_", "sm_sat_"},
		pattern: `\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{14,20}`,
		back:    1, fwd: 300,
	},
	{
		id: "shippo-token", keywords: []string{"shippo_"},
		pattern: `(?i)\bshippo_(?:live|test)_[a-fA-F0-9]{36,44}`,
		back:    1, fwd: 300,
	},
	{
		id: "shopify-token", keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
		pattern: `(?i)\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{28,36}`,
		back:    1, fwd: 300,
	},
	{
		id: "slack-token", keywords: []string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe", "xapp-"},
		pattern: `(?i)\bxox[abeoprs]-[A-Za-z0-9\-]{8,}|\bxoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|\bxapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+|\bxapp-\d-[A-Za-z0-9\-]{8,}`,
		back:    1, fwd: 300,
	},
	{
		id: "slack-webhook", keywords: []string{"hooks.slack.com/"},
		pattern: `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}`,
		back:    1, fwd: 300,
	},
	{
		id: "sourcegraph-token", keywords: []string{"sgp_"},
		pattern: `(?i)\bsgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{36,44}|\bsgp_[a-fA-F0-9]{36,44}`,
		back:    1, fwd: 300,
	},
	{
		id: "square-token", keywords: []string{"eaaa", "sq0atp-", "sq0csp-"},
		pattern: `\b(?:EAAA|sq0atp-|sq0csp-)[\w\-]{20,}`,
		back:    1, fwd: 300,
	},
	{
		id: "stripe-key", keywords: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"},
		pattern: `\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9+/=]{24,}`,
		back:    1, fwd: 300,
	},
	{
		id: "telegram-bot-token", keywords: []string{":aa"},
		pattern: `\d{5,16}:AA[A-Za-z0-9_\-]{30,40}\b`,
		back:    17, fwd: 300,
	},
	{
		id: "twilio-key", keywords: []string{"SK"},
		exact: true, near: hex32After2,
		pattern: `\bSK[0-9a-fA-F]{32}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "vault-token", keywords: []string{"hvs.", "hvb.", "s."},
		pattern: `\bhv[sb]\.[\w\-]{24,}|\bs\.[A-Za-z0-9]{24}\b`,
		back:    1, fwd: 300,
		check: vaultLike,
	},
	{
		id: "yandex-token", keywords: []string{"t1.", "aqvn"},
		pattern: `\bt1\.[A-Za-z0-9_\-]+={0,2}\.[A-Za-z0-9_\-]{80,}={0,2}|\bAQVN[A-Za-z0-9_\-]{32,40}`,
		back:    1, fwd: 300,
	},
	{
		id: "discord-bot-token", keywords: []string{"MT", "Mj", "Mz", "MD", "NT", "Nj", "Nz", "ND", "OT", "Oj", "Oz", "OD"},
		exact: true, near: discordFirstPart,
		pattern: `\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "sk-token", keywords: []string{"sk-"},
		pattern: `\bsk-[A-Za-z0-9_\-]{20,}`,
		back:    1, fwd: 300,
		check: hasDigit,
	},
	{
		id: "ai-provider-key", keywords: []string{"gsk_", "xai-", "r8_", "csk-", "nvapi-", "fw_"},
		pattern: `\bgsk_[A-Za-z0-9]{40,}|\bxai-[A-Za-z0-9]{60,}|\br8_[A-Za-z0-9]{30,}|\bcsk-[a-z0-9]{40,}|\bnvapi-[A-Za-z0-9_\-]{50,}|\bfw_[A-Za-z0-9]{20,}`,
		back:    1, fwd: 300,
	},
	{
		id: "google-oauth", keywords: []string{"gocspx-", "ya29."},
		pattern: `\bGOCSPX-[A-Za-z0-9_\-]{24,32}|\bya29\.[A-Za-z0-9_\-]{20,}`,
		back:    1, fwd: 300,
	},
	{
		id: "prefixed-key", keywords: []string{"nfp_", "tfp_", "oy2", "figd_"},
		pattern: `\bnfp_[A-Za-z0-9]{36,44}|\btfp_[A-Za-z0-9_\-.=]{40,}|\boy2[a-z0-9]{40,46}|\bfigd_[A-Za-z0-9_\-]{36,44}`,
		back:    1, fwd: 300,
	},
	{
		id: "lob-key", keywords: []string{"live_", "test_"},
		pattern: `\b(?:live|test)(?:_pub)?_[a-f0-9]{31,35}\b`,
		back:    1, fwd: 300,
	},
	{
		id: "plaid-token", keywords: []string{"access-sandbox-", "access-development-", "access-production-"},
		pattern: `\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`,
		back:    1, fwd: 300,
	},
	{
		id: "defined-networking-key", keywords: []string{"dnkey-"},
		pattern: `\bdnkey-[A-Za-z0-9=_\-]{26}-[A-Za-z0-9=_\-]{52}`,
		back:    1, fwd: 300,
	},
	{
		id: "discord-webhook", keywords: []string{"discord.com/api", "discordapp.com/api"},
		pattern: `(?i)(?:\bhttps?://)?\b(?:[a-z]+\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{5,30}/([A-Za-z0-9_\-]{30,})`,
		back:    40, fwd: 300,
		groups: []int{1},
	},
	{
		id: "okta-ssws", keywords: []string{"ssws"},
		pattern: `(?i)\bssws\s+([A-Za-z0-9_\-=]{20,})`,
		back:    1, fwd: 120,
		groups: []int{1},
		check:  tokenLike,
	},
	{
		id: "twilio-auth-token", keywords: []string{"AC"}, exact: true, near: hex32After2,
		// An account SID and, within the next few lines, a 32-hex token
		// of its own (the auth token): Client("AC...", "<hex>"), or a
		// second variable whatever its name.
		scan: scanTwilioToken,
	},
	{
		id: "google-refresh-token", keywords: []string{"1//0"},
		pattern: `\b1//0[0-9A-Za-z_\-]{40,}`,
		back:    1, fwd: 300,
	},
	{
		id: "oauth-refresh-token", keywords: []string{"rt_"},
		pattern: `\brt_[A-Za-z0-9_\-]{30,}`,
		back:    1, fwd: 300,
		check: randomLike,
	},
	{
		id: "putty-private-key", keywords: []string{"private-lines:"},
		scan: scanPuttyPrivate,
	},
	{
		id: "putty-private-mac", keywords: []string{"private-mac:", "private-hash:"},
		pattern: `(?i)\bprivate-(?:mac|hash):[ \t]*([0-9a-f]{32,})`,
		back:    1, fwd: 200,
		groups: []int{1},
	},
}

// scanPuttyPrivate redacts the private section of a PuTTY key file (.ppk,
// versions 2 and 3): the lines "Private-Lines: N" announces.
func scanPuttyPrivate(s string, i, k int, _ *compiledRule) []span {
	j := skipBlanks(s, i+k)
	n := 0
	for j < len(s) && isDigit(s[j]) && n < 1000 {
		n = n*10 + int(s[j]-'0')
		j++
	}
	var out []span
	for l := 0; l < min(n, 256); l++ {
		j = lineEnd(s, j)
		if j < len(s) && s[j] == '\r' {
			j++
		}
		if j >= len(s) || s[j] != '\n' {
			break
		}
		st := skipBlanks(s, j+1)
		en := lineEnd(s, st)
		if en == st || strings.Contains(s[st:en], ": ") {
			break
		}
		out = append(out, span{st, en})
		j = en
	}
	return out
}

// The near functions are named functions rather than closures made by a
// constructor: a closure in a table entry is made when the package
// initialises, in every process, and writes its table's page (a fault of
// its own in a short hook process), where a named function is data the
// compiler lays out.

// hex32After2 vets a two-byte keyword hit followed by 32 hex digits.
func hex32After2(s string, i int) bool { return hexAfter(s, i, 2, 32) }

// discordFirstPart vets a hit that starts a Discord bot token's first
// part: a run of token bytes reaching a '.' 23 to 28 bytes on.
func discordFirstPart(s string, i int) bool { return dotAfter(s, i, 23, 28) }

// hexAfter reports whether the keyword hit of length k at s[i:] is
// followed by n hex digits.
func hexAfter(s string, i, k, n int) bool {
	return i+k+n <= len(s) && hexOnly(s[i+k:i+k+n], n)
}

// dotAfter reports whether the hit at s[i:] starts a run of token bytes
// reaching a '.' between lo and hi bytes on.
func dotAfter(s string, i, lo, hi int) bool {
	for j := i; j < len(s) && j-i <= hi; j++ {
		switch c := s[j]; {
		case c == '.':
			return j-i >= lo
		case !isAlnum(c) && c != '_' && c != '-':
			return false
		}
	}
	return false
}

// scanTwilioToken redacts the auth token that travels with a Twilio
// account SID: a 32-hex token standing alone (quoted or as a whole word)
// within the next 240 bytes, up to three lines on.
func scanTwilioToken(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && isAlnum(s[i-1]) || i+k+32 < len(s) && isAlnum(s[i+k+32]) {
		return nil
	}
	from, end := i+k+32, min(len(s), i+k+32+240)
	lines := 0
	for j := from; j < end; j++ {
		if s[j] == '\n' {
			if lines++; lines > 3 {
				break
			}
		}
		if !isHex(s[j]) || isAlnum(s[j-1]) || j+32 > len(s) || !hexOnly(s[j:j+32], 32) || j+32 < len(s) && isAlnum(s[j+32]) {
			continue
		}
		return []span{{j, j + 32}}
	}
	return nil
}

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
		tp: []string{"A3-IRYL7P-GVZEIM52T2V-KY04J-0O59U-PQI7X", "ops_eyJxP/KZ5zanPBk6DOq3CeblX+z1B34F5DCacVoPSlnwZDA9tOZjwSHjKBZeZKBMRGGVzS6w6c41rYuyrH7Oi4gBOmOc0VXlNQVn+ui2cn0k6Kx25LuD3FDU5WRwBZb/N+GYq8Z05K1I0+qCSYWqkT1Q+q/z1x94oHjWex3Ncfqqr97UmDB+Z4p"},
		fp: []string{"A3-ABC", "ops_eyJshort"},
	},
	{
		id: "adobe-client-secret", keywords: []string{"p8e-"},
		pattern: `(?i)\bp8e-[A-Za-z0-9]{28,40}`,
		back:    1, fwd: 300,
		tp: []string{"p8e-nmO0qFQEkXxkOPYOliEjZZg0QItsAh1K", "p8e-hjsrggSuyt5dRrzzvjiqbzE27svm8k"},
		fp: []string{"p8e-short"},
	},
	{
		id: "age-secret-key", keywords: []string{"age-secret-key-1"},
		pattern: `\bAGE-SECRET-KEY-1[A-Z0-9]{50,64}`,
		back:    1, fwd: 300,
		tp: []string{"AGE-SECRET-KEY-16NCY8MU1CSTTYWUXJCHJMJCZ03CBAONQWSJG1C0PLN14M3NSK26M5TVW9V"},
		fp: []string{"AGE-SECRET-KEY-1SHORT"},
	},
	{
		id: "airtable-pat", keywords: []string{"pat"},
		pattern: `\bpat[A-Za-z0-9]{12,16}\.[a-f0-9]{56,}\b`,
		back:    1, fwd: 300,
		tp: []string{"pat8Vs0uL1Jc3HX5q.dea75f874e00728f6e3fc4deb67bb797ff023b341d6370227af4aef49b95700d"},
		fp: []string{"path.to.file", "pattern.match"},
	},
	{
		id: "alibaba-access-key-id", keywords: []string{"ltai"},
		pattern: `(?i)\bLTAI[A-Za-z0-9]{12,30}\b`,
		back:    1, fwd: 300,
		tp: []string{"LTAIIKChzKqgqKDLIVSMyr7G", "LTAI5fLud6UL9sjKws0N"},
		fp: []string{"LTAI-short"},
	},
	{
		id: "artifactory", keywords: []string{"akcp", "cmvmd"},
		pattern: `\bAKCp[A-Za-z0-9]{60,}\b|\bcmVmd[A-Za-z0-9]{50,}\b`,
		back:    1, fwd: 300,
		tp: []string{"AKCp9ukMLd4Bp36dNhal3P0RRX5Akim9tHtueATskkRKK5JRoPjRCwyo5V2fkzDaYAR3EeJ4a", "cmVmdxhT6Ixs3zzS0bwVd47GaQtDltd6eD76zkuXNjT1WJakBcriWMLvNy0X3d0h"},
		fp: []string{"AKCp-short"},
	},
	{
		id: "atlassian-api-token", keywords: []string{"atatt3"},
		pattern: `\bATATT3[A-Za-z0-9_\-=]{150,}`,
		back:    1, fwd: 300,
		tp: []string{"ATATT3dm5XNhXIqWXXupyMKAdVt__KTZ8D0xqCALg2sMEFo8si3s_yjUAvJRUfeXOZcJ83zTNaxzIzP-CbLQ3e8Oze4Aq0JLX1UyhNWcR92ddA7DSwSO4g8kheqzIkYSmvrcrkNSm3HE9NPz64bXuNhDi64LouyivailtDvsfpcZfjFiBdFKbJv0bWWd741x"},
		fp: []string{"ATATT3short"},
	},
	{
		id: "authress-access-key", keywords: []string{".acc_", ".acc-"},
		pattern: `\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,}`,
		back:    80, fwd: 300,
		tp: []string{"authress_mc6ciitxh49h.jyy6z.acc_ghqeqxdabqughf5s.mUTlE6nHTvKFyNpKcPt5jSktWtHUXwFfGPcWTkMyYiRiV73k"},
		fp: []string{"sc_x.acc_y"},
	},
	{
		id: "aws-access-key-id", keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
		pattern: `\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{14,20}\b`,
		back:    1, fwd: 300,
		tp: []string{"AKIAIOSFODNN7EXAMPLE", "id=ASIAY34FZKBOKMUTVV7A;", "AKIACAB8704YHWCG15QA5H"},
		fp: []string{"AKIA-short", "akiaiosfodnn7example"},
	},
	{
		id: "aws-bedrock-api-key", keywords: []string{"absk", "bedrock-api-key-"},
		pattern: `\bABSK[A-Za-z0-9+/]{80,}={0,2}|\bbedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_\-]*`,
		back:    1, fwd: 300,
		tp: []string{"ABSKih23+hgTpjxrla8HgvAJn8D27sJtpkz9b8JqOvBXvR+HlVZHbLn56J4fZzOpQ2Xj1/+mrOwM/3U/KntIymxQOW4XrSrZ2IpyhU3G3DTyG+s9J8o5mkMx25DlY+CevSX1fc8A", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tpXiv7rTBjvFVUwYG2fN6J4SRPNlTZbnTTtVVKv5P"},
		fp: []string{"ABSK-short"},
	},
	{
		id: "azure-ad-client-secret", keywords: []string{"q~"},
		pattern: `(?:^|[\\'"\x60\s>=:(,)])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{28,40})`,
		back:    5, fwd: 300,
		groups: []int{1},
		tp:     []string{"secret=K2E8Q~YA2uo26XAn1fCWXP1wgdB2wApZuxynMM4q"},
		fp:     []string{"Q~ alone", "abc8Q~short"},
	},
	{
		id: "clickhouse-cloud-key", keywords: []string{"4b1d"},
		pattern: `(?i)\b4b1d[A-Za-z0-9]{34,44}\b`,
		back:    1, fwd: 300,
		tp: []string{"4b1dSnw33mvQOLAmONLXsSSYeY3ODoIWiTBEdtra4c"},
		fp: []string{"4b1d short"},
	},
	{
		id: "clojars-token", keywords: []string{"clojars_"},
		pattern: `(?i)\bCLOJARS_[a-z0-9]{50,}`,
		back:    1, fwd: 300,
		tp: []string{"CLOJARS_789f9e41v0l7qabqc10hqthsajskilymvxo9v76ot1sgylbhrxwily8rsc4n"},
		fp: []string{"CLOJARS_X"},
	},
	{
		id: "cloudflare-origin-ca-key", keywords: []string{"v1.0-"},
		pattern: `\bv1\.0-[a-f0-9]{24}-[a-f0-9]{140,}`,
		back:    1, fwd: 300,
		tp: []string{"v1.0-bd8a8ea638348ce91858ee5b-4d889593c981c3bae91d2fadb336b3622b158afe05ddde8574d4dab94d48ebd4f551c6f121b348674f43a41b8ad72558d6044739dcfb5496025404cde3dd88521018844f8c2357574d"},
		fp: []string{"v1.0-beta"},
	},
	{
		id: "databricks-token", keywords: []string{"dapi"},
		pattern: `\bdapi[a-f0-9]{30,40}(?:-\d)?`,
		back:    1, fwd: 300,
		tp: []string{"dapifa7058853b3dbe7b1f5f3d473102da3b", "dapi613dbb6f7be27418793d57b6da550f6e-2"},
		fp: []string{"dapi-docs", "dapi12"},
	},
	{
		id: "digitalocean-token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
		pattern: `(?i)\bdo[opr]_v1_[a-f0-9]{60,}`,
		back:    1, fwd: 300,
		tp: []string{"dop_v1_44b8013173f6fba7ef39e75aeca32b910aa60e8294745df135dd0b629849fc3e", "dor_v1_2fc34cb275e219627a55d644a88b421effa956a050b8a451a183809c094e8e9c"},
		fp: []string{"dop_v1_short"},
	},
	{
		id: "doppler-token", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."},
		pattern: `(?i)\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{36,50}`,
		back:    1, fwd: 300,
		tp: []string{"dp.pt.FmL4M6fIL6y47NA0f4fcL67Ego8XtQkY5p0aCLbrl5B", "dp.st.upO4GfVAT4dutYbw4cOHOebgbZqolk9asQ28Lp9M"},
		fp: []string{"dp.pt.short"},
	},
	{
		id: "duffel-token", keywords: []string{"duffel_"},
		pattern: `(?i)\bduffel_(?:test|live)_[A-Za-z0-9_\-=]{38,50}`,
		back:    1, fwd: 300,
		tp: []string{"duffel_live_-WKxqI25gePf95KBkzKoZhTf88cFNeXS7qlIP2SkZ5V"},
		fp: []string{"duffel_test_x"},
	},
	{
		id: "dynatrace-token", keywords: []string{"dt0c01."},
		pattern: `(?i)\bdt0c01\.[A-Za-z0-9]{20,28}\.[A-Za-z0-9]{56,}`,
		back:    1, fwd: 300,
		tp: []string{"dt0c01.MUNZA89ENE933BWA49BHYH8I.auv1520hXKrxUGIVXvVb5FvqY6PAOGejBTbr0jjYugAY9AZMOkZgQdbhcpqKZN8q"},
		fp: []string{"dt0c01.x.y"},
	},
	{
		id: "easypost-token", keywords: []string{"ezak", "eztk"},
		pattern: `(?i)\bEZ[AT]K[A-Za-z0-9]{48,60}\b`,
		back:    1, fwd: 300,
		tp: []string{"EZAKLp1jbtdXZkUR9wymMutNfr8DC1aL3OGA7s6N41S42yipw7nH2T1D1r", "EZTKfJrFQOjjaScKfN5bSoK4R130XIW13J4mDad3BKFhTQ6eHmoukyHb1W"},
		fp: []string{"EZAKshort"},
	},
	{
		id: "facebook-page-token", keywords: []string{"eaam", "eaac"},
		pattern: `\bEAA[MC][A-Za-z0-9]{80,}`,
		back:    1, fwd: 300,
		tp: []string{"EAACch12kwj0NMtGVoH9BZZ4PzVkpufAB6yK6byn0YN0DAteDTEZ5UpOMb2YzkCz6tupw48ig4cgYoG85GzXgd4mCOwpptyuQn5k24fmZRWpmmiqAwiB0E8rC58r"},
		fp: []string{"EAACshort"},
	},
	{
		id: "facebook-app-token", keywords: []string{"facebook", "%7c"},
		pattern: `\b\d{15,16}(?:\||%7[Cc])[0-9A-Za-z\-_]{27,40}`,
		back:    512, fwd: 512,
		tp: []string{"facebook token 906212591435365|tu-ZENFgQGJN2gpR4Oa7gRcE_gipJ81N", "?access_token=7485034640231343%7C2Baa64dI57XUhbN69YhVpHPw1p8B3g"},
		fp: []string{"facebook 123|abc"},
	},
	{
		id: "flutterwave-key", keywords: []string{"flwseck", "flwpubk"},
		pattern: `(?i)\bFLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{10,}(?:-X)?`,
		back:    1, fwd: 300,
		tp: []string{"FLWSECK_TEST-d72dfda8568243027255ef4b6c0d6d2b-X", "FLWSECK_TEST-2a34ade0b30c", "FLWPUBK-169c255e086d203382799eac9dcfb50d-X"},
		fp: []string{"FLWSECK_TEST-"},
	},
	{
		id: "flyio-token", keywords: []string{"fo1_", "fm1a_", "fm1r_", "fm2_"},
		pattern: `\bfo1_[\w\-]{38,50}|\bfm[12][ar]?_[A-Za-z0-9+/]{80,}={0,3}`,
		back:    1, fwd: 300,
		tp: []string{"fo1_ENaIm0XeR8jz0Of2emnZrk30EkizeZzyjMH95wYjQ1y", "fm2_acYuAnBgBnX7pje8/Iy87b+Tn9NjearKH2HifRSfcwhLhWRk/r2PX3LYxxfOSu4nT70EPPKN94Jt046s810UP79q7yQcqwv7JumhhZr0IB2AKcw46GbyHx7K"},
		fp: []string{"fo1_short"},
	},
	{
		id: "frameio-token", keywords: []string{"fio-u-"},
		pattern: `(?i)\bfio-u-[A-Za-z0-9\-_=]{56,}`,
		back:    1, fwd: 300,
		tp: []string{"fio-u-dsqZ0iZj7LFFJaFyUgHq09DR9yU8574Fznps4rOPm4H-Y6nDX1mLaocyjJXuU35S"},
		fp: []string{"fio-u-short"},
	},
	{
		id: "gcp-api-key", keywords: []string{"aiza"},
		pattern: `\bAIza[\w\-]{30,40}`,
		back:    1, fwd: 300,
		tp: []string{"AIzaSyA0123456789abcdefghijklmnopqrstuv", "AIzayrDrgdp2lI_oLFNLLFq_LC75QFcrwSLXZ0W"},
		fp: []string{"AIzaShort"},
	},
	{
		id: "github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		pattern: `\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,})`,
		back:    1, fwd: 300,
		tp: []string{"ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_HzhpfBmGA7TPnfk3HSQmzF9EPRar5C", "ghs_ci3ddhGx7G6fX1THaq1DmNobgaZbAtWMD2QZ640W", "github_pat_RY3TazcrsXKH0xXvGDEtk0ZQDQRZuBjIc3pCDuvBdSsIWUvzZdlfC1hRIXT3DBPJ-GWyAV9J3D7sR1wa6w"},
		fp: []string{"ghp_short", "the ghs_ prefix"},
	},
	{
		id: "gitlab-token", keywords: []string{"glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glcbt-", "glffct-", "glimt-", "glagent-", "gloas-", "glwt-", "gr1348941", "_gitlab_session="},
		pattern: `\bgl(?:pat|ptt|rt|dt|ft|soat|cbt|ffct|imt|agent|oas|wt)-[0-9A-Za-z_.\-]{16,}|\bGR1348941[\w\-]{16,40}|_gitlab_session=[0-9a-z]{28,40}`,
		back:    1, fwd: 300,
		tp: []string{"glpat-y7dJNC8r1WT8Kyievt2V", "glpat-RnuOn3XHf908FcNmyciyZh7Jm7u.01hoj6m9k", "glrt-t1_Q_2GVZsYj4WyKuYl_inl3bOF_8w", "GR1348941AqxntGQNiXkKzpNQAy6l", "_gitlab_session=fp891h9ybb0hbxwrykwsx34v2vrke94d", "glcbt-12_acJCyyEJ9SqDdguGz36r"},
		fp: []string{"glpat-short"},
	},
	{
		id: "grafana-token", keywords: []string{"eyjrijoi", "glc_", "glsa_"},
		pattern: `(?i)\beyJrIjoi[A-Za-z0-9]{60,}={0,3}|\bglc_[A-Za-z0-9+/]{28,}={0,3}|\bglsa_[A-Za-z0-9]{28,36}_[A-Fa-f0-9]{8}`,
		back:    1, fwd: 300,
		tp: []string{"eyJrIjoiXqR3pBUkz9Yv514UCMlhHnmnfp5koVnHSBjQXOibkVpFzgvHthhKVNYJixFoCRWTWlVOwp7s", "glc_O8VLTL7VH7eeWHGAUDdeVRsK+4MNOdMCHPyUdB6A", "glsa_i6Wqat5qzOTdDaW3bvLcvTDv1OkHf00o_4b51bc9b"},
		fp: []string{"glc_short"},
	},
	{
		id: "harness-token", keywords: []string{"pat.", "sat."},
		pattern: `\b(?:pat|sat)\.[A-Za-z0-9_\-]{18,26}\.[A-Za-z0-9]{20,28}\.[A-Za-z0-9]{16,24}`,
		back:    1, fwd: 300,
		tp: []string{"pat.34BZR47O0wtTFF51LL007j.pGg6eqWcEThV899ivRkVbP8r.bkr39LcudWz2QnhVn21X"},
		fp: []string{"pat.x.y.z"},
	},
	{
		id: "hashicorp-tf-token", keywords: []string{"atlasv1"},
		pattern: `\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{56,}`,
		back:    20, fwd: 300,
		tp: []string{"29hiwuyd8yrn4e.atlasv1.KcQLkpUFcZvj-RXuIC7qCc2Bd0sNygJfNSPJ3DZWOEZgp03nE87XQl1bE18uP_DG62a"},
		fp: []string{"x.atlasv1.y"},
	},
	{
		id: "heroku-token-v2", keywords: []string{"hrku-"},
		pattern: `\bHRKU-AA[0-9A-Za-z_\-]{50,}`,
		back:    1, fwd: 300,
		tp: []string{"HRKU-AAm8JvZdKUvHbd6BAHxAyYJYtFpjRkR0zcgnZ6vF0I3zVsy3-ZgCLDSmC84t"},
		fp: []string{"HRKU-AA"},
	},
	{
		id: "huggingface-token", keywords: []string{"hf_", "api_org_"},
		pattern: `(?i)\b(?:hf_|api_org_)[A-Za-z0-9]{30,40}`,
		back:    1, fwd: 300,
		tp: []string{"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "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", "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"},
		fp: []string{"hf_short"},
	},
	{
		id: "infracost-token", keywords: []string{"ico-"},
		pattern: `\bico-[A-Za-z0-9]{28,36}`,
		back:    1, fwd: 300,
		tp: []string{"ico-Ze29heFIQiUUsZZslIRhhaGcolfL3B1h"},
		fp: []string{"ico-short"},
	},
	{
		id: "intra42-secret", keywords: []string{"s-s4t2"},
		pattern: `(?i)\bs-s4t2(?:ud|af)-[a-f0-9]{56,}`,
		back:    1, fwd: 300,
		tp: []string{"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"},
		fp: []string{"s-s4t2ud-x"},
	},
	{
		id: "linear-token", keywords: []string{"lin_api_", "lin_oauth_"},
		pattern: `(?i)\blin_(?:api|oauth)_[A-Za-z0-9]{36,48}`,
		back:    1, fwd: 300,
		tp: []string{"lin_api_xUC2VSNIEeWoVPQgGLxQbDfcLWniO5cbOZba9h2l"},
		fp: []string{"lin_api_short"},
	},
	{
		id: "mailchimp-key", keywords: []string{"-us"},
		pattern: `\b[a-f0-9]{32}-us\d{1,2}\b`,
		back:    34, fwd: 300,
		tp: []string{"b31a966d1b7a46ccb972dcd7c8c2f33d-us12"},
		fp: []string{"deadbeef-us1"},
	},
	{
		id: "mailgun-key", keywords: []string{"key-", "pubkey-"},
		pattern: `\b(?:pub)?key-[a-f0-9]{32}\b|\b[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}\b`,
		back:    1, fwd: 300,
		tp: []string{"key-05f5bca5653c1924e2230d0b929edf9f", "pubkey-419e91604a11dee3e3212827ab45ab2e"},
		fp: []string{"key-value store", "key-"},
	},
	{
		id: "mapbox-token", keywords: []string{"pk.", "sk.", "tk."},
		pattern: `\b[pst]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{16,}|\b[ps]k\.[A-Za-z0-9]{50,}\.[A-Za-z0-9]{18,26}\b`,
		back:    1, fwd: 300,
		tp: []string{"pk.eyJulJB0j35VnNBPAhIvTrVSUmdhwKHOLoQvRKWtkAsFbkGLr4uVcQ1iUp7io2R.9dQX4pHvgsC4IfTU1tiN4w", "sk.rjvry1lf3h1pwkujw1vk8gokwgeubp1anatxe2f2we6g9hg0galvwcc47h8r.0602u12wq7q1nkywmtfo6v"},
		fp: []string{"task.run()", "pk.x"},
	},
	{
		id: "maxmind-license-key", keywords: []string{"_mmk"},
		pattern: `\b[A-Za-z0-9]{6}_[A-Za-z0-9]{26,32}_mmk\b`,
		back:    45, fwd: 300,
		tp: []string{"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"},
		fp: []string{"x_mmk"},
	},
	{
		id: "teams-webhook", keywords: []string{"webhook.office.com", "logic.azure.com"},
		pattern: `https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_\-]{40,}|https://[a-z0-9\-.]+\.logic\.azure\.com[:0-9]*/workflows/[^\s'\"]+`,
		back:    64, fwd: 300,
		tp: []string{"https://acme.webhook.office.com/webhookb2/66388b6e-aaaa-bbbb-cccc-bb0f684b7a1b@ec2f8c7d-1111-2222-3333-70bad126830b/IncomingWebhook/5e8b39c26e8dacf68c3d9fe3844b332d/2c49925e-4444-5555-6666-98f844de692c"},
		fp: []string{"webhook.office.com docs"},
	},
	{
		id: "newrelic-key", keywords: []string{"nrjs-", "nrii-", "nrak-", "nraa-"},
		pattern: `\bNR(?:JS|II|AK|AA)-[A-Za-z0-9\-]{19,40}`,
		back:    1, fwd: 300,
		tp: []string{"NRAK-HA01R98YKWZYT7PRV1YIYRTUM3J", "NRJS-31b1d2d54036071763e", "NRII-kq8dl59br57bygtpb8gevjn9dzz0tv3w"},
		fp: []string{"NRAK-x"},
	},
	{
		id: "notion-token", keywords: []string{"ntn_", "secret_"},
		pattern: `\bntn_[0-9]{11}[A-Za-z0-9]{30,40}|\bsecret_[A-Za-z0-9]{40,46}\b`,
		back:    1, fwd: 300,
		tp: []string{"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", "secret_ZlLvW6RmuqcRWeUChoB2Adua8OHBsH304URlgq8tZ7r"},
		fp: []string{"secret_name", "ntn_1"},
	},
	{
		id: "npm-token", keywords: []string{"npm_"},
		pattern: `(?i)\bnpm_[A-Za-z0-9]{30,40}`,
		back:    1, fwd: 300,
		tp: []string{"npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_y6XaAmfReLwXXbNqnkX1jGGpzG1kNG27wI4Q"},
		fp: []string{"npm_config_cache"},
	},
	{
		id: "octopus-deploy-key", keywords: []string{"api-"},
		pattern: `\bAPI-[A-Z0-9]{22,32}\b`,
		back:    1, fwd: 300,
		tp: []string{"API-973GBY49GPMKWTVFZWNGVWYD5U"},
		fp: []string{"API-KEY", "api-gateway-service-name-here"},
	},
	{
		id: "openshift-token", keywords: []string{"sha256~"},
		pattern: `\bsha256~[\w\-]{38,50}`,
		back:    1, fwd: 300,
		tp: []string{"sha256~9fhps5zPEuUGqYdWdONVIU_cMzAeDgVaOGWr5C1-U3b"},
		fp: []string{"sha256~x"},
	},
	{
		id: "perplexity-key", keywords: []string{"pplx-"},
		pattern: `\bpplx-[A-Za-z0-9]{40,56}`,
		back:    1, fwd: 300,
		tp: []string{"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"},
		fp: []string{"pplx-short"},
	},
	{
		id: "planetscale-token", keywords: []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"},
		pattern: `(?i)\bpscale_(?:tkn|pw|oauth)_[\w=.\-]{28,}`,
		back:    1, fwd: 300,
		tp: []string{"pscale_tkn_HANLyUzWnrd6DWxT9vjKdJ7-pBFrJRR97KoRCLpLE6o", "pscale_pw_Ypn44F8l83IlrBRRUzfdEGC2poBjI2blVWU3LZAgd5p"},
		fp: []string{"pscale_tkn_x"},
	},
	{
		id: "postman-key", keywords: []string{"pmak-"},
		pattern: `(?i)\bPMAK-[A-Fa-f0-9]{20,28}-[A-Fa-f0-9]{30,38}`,
		back:    1, fwd: 300,
		tp: []string{"PMAK-4b227d8ab47392005537683f-f72496b0213b90c7a430b2aafed8755e3c"},
		fp: []string{"PMAK-x"},
	},
	{
		id: "prefect-key", keywords: []string{"pnu_"},
		pattern: `\bpnu_[A-Za-z0-9]{32,40}`,
		back:    1, fwd: 300,
		tp: []string{"pnu_Z75HIXUtnuFyf8JNOIGPbePQ4Emy6SnS0R1r"},
		fp: []string{"pnu_x"},
	},
	{
		id: "pulumi-token", keywords: []string{"pul-"},
		pattern: `(?i)\bpul-[a-f0-9]{36,44}`,
		back:    1, fwd: 300,
		tp: []string{"pul-281578b4c871adcbbab0b521966b253f4d9c4e7c"},
		fp: []string{"pul-x"},
	},
	{
		id: "pypi-token", keywords: []string{"pypi-ageichlwas5vcmc"},
		pattern: `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`,
		back:    1, fwd: 300,
		tp: []string{"pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NTY3ODkw"},
		fp: []string{"pypi-AgEIcHlwaS5vcmc"},
	},
	{
		id: "readme-key", keywords: []string{"rdme_"},
		pattern: `(?i)\brdme_[a-z0-9]{60,}`,
		back:    1, fwd: 300,
		tp: []string{"rdme_o9e0a3d593skdaqx2tn03u6fsiv3dxyqbvqbvu4efjhdtxasmk667uat63vha5k0ox2p4n"},
		fp: []string{"rdme_x"},
	},
	{
		id: "rubygems-key", keywords: []string{"rubygems_"},
		pattern: `(?i)\brubygems_[a-f0-9]{40,56}`,
		back:    1, fwd: 300,
		tp: []string{"rubygems_879cae437d17362dd9a65ce1ca2a0518b70c5c775d468d6b"},
		fp: []string{"rubygems_org"},
	},
	{
		id: "scalingo-token", keywords: []string{"tk-us-"},
		pattern: `\btk-us-[\w\-]{40,56}`,
		back:    1, fwd: 300,
		tp: []string{"tk-us-7IbVVO5BITlObJmVGhpqbCIcaMoRz-fUODVe6gAW48VsFr7W"},
		fp: []string{"tk-us-x"},
	},
	{
		id: "sendgrid-key", keywords: []string{"sg."},
		pattern: `(?i)\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,}|\bSG\.[A-Za-z0-9=_\-.]{60,}`,
		back:    1, fwd: 300,
		tp: []string{"SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "SG.TJGRyTFFqrkAYZbaLzjiyDd02yOsWwjmqMY9BhlhYjJ1iTjvlXGIDyxBIWUwOIAA8e"},
		fp: []string{"SG.short.x"},
	},
	{
		id: "sendinblue-key", keywords: []string{"xkeysib-", "xsmtpsib-"},
		pattern: `(?i)\bx(?:keysib|smtpsib)-[a-f0-9]{60,}-[A-Za-z0-9]{14,20}`,
		back:    1, fwd: 300,
		tp: []string{"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"},
		fp: []string{"xkeysib-x"},
	},
	{
		id: "sentry-token", keywords: []string{"sntrys_", "sntryu_"},
		pattern: `\bsntry[su]_[A-Za-z0-9+/=_]{40,}`,
		back:    1, fwd: 300,
		tp: []string{"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", "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"},
		fp: []string{"sntryu_x"},
	},
	{
		id: "settlemint-token", keywords: []string{"sm_aat_", "sm_pat_", "sm_sat_"},
		pattern: `\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{14,20}`,
		back:    1, fwd: 300,
		tp: []string{"sm_pat_H1nLldXboz6FtR7P"},
		fp: []string{"sm_pat_x"},
	},
	{
		id: "shippo-token", keywords: []string{"shippo_"},
		pattern: `(?i)\bshippo_(?:live|test)_[a-fA-F0-9]{36,44}`,
		back:    1, fwd: 300,
		tp: []string{"shippo_live_d698000c1c4cdfbbaf9e9630c27a9f7c97e0472b"},
		fp: []string{"shippo_live_x"},
	},
	{
		id: "shopify-token", keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
		pattern: `(?i)\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{28,36}`,
		back:    1, fwd: 300,
		tp: []string{"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", "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"},
		fp: []string{"shpat_x"},
	},
	{
		id: "slack-token", keywords: []string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe", "xapp-"},
		pattern: `(?i)\bxox[abeoprs]-[A-Za-z0-9\-]{8,}|\bxoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|\bxapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+|\bxapp-\d-[A-Za-z0-9\-]{8,}`,
		back:    1, fwd: 300,
		tp: []string{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xapp-1-A0123456789-0123456789012-abcdef", "xoxe.xoxp-1-cI9QlDCV4ryzmxxAVv8u6JJWfKh9NYrNly7D0d3AZeufAN8Rg0JgtKFql67yYzwUgXNLU9ug8n3FwvjGYIvYI0Pa5Bl2DwuUyXnNFa0n0evw4sAJ4SuM7VEgRaCEozfVMRvkeFrQMsZQUKV9xr2e6Yf5Z16B6D0bJC7b", "xoxe-1-zBzcTJGt5b0CLh0VAA4qra3ZMar43BSNKW3FuKHaSXwzBPxAH1QLDKJC2WetXtpstKoEVPFJgZaLuEJqLiOTOM7YBvpaJXMil2h72JEBy06qLjg6XJX5zoDeay1GQpxs9aBhAiHPBdgzkkMj8c"},
		fp: []string{"xoxb-1"},
	},
	{
		id: "slack-webhook", keywords: []string{"hooks.slack.com/"},
		pattern: `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}`,
		back:    1, fwd: 300,
		tp: []string{"https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
		fp: []string{"https://hooks.slack.com/"},
	},
	{
		id: "sourcegraph-token", keywords: []string{"sgp_"},
		pattern: `(?i)\bsgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{36,44}|\bsgp_[a-fA-F0-9]{36,44}`,
		back:    1, fwd: 300,
		tp: []string{"sgp_8efec93ea2e0349a_9fac5f22146abd09d66665d882767ce32b61dc9e", "sgp_54569620ebd9bd8a4e30838eae9b03b58746316b"},
		fp: []string{"sgp_x"},
	},
	{
		id: "square-token", keywords: []string{"eaaa", "sq0atp-", "sq0csp-"},
		pattern: `\b(?:EAAA|sq0atp-|sq0csp-)[\w\-]{20,}`,
		back:    1, fwd: 300,
		tp: []string{"EAAAwCZG4egwjumaN59umbTzrI-ODaN3C_ukiqSjaxxjmBSGbYhMghiBw6qW-94M", "sq0atp-U3q5pnkw-zRQcVfUt0r78Y", "sq0csp-9Jiuw-RDwJB5kV-HLJtZ6gYHr6-uyUUa7PJ53rJ5P9f"},
		fp: []string{"EAAAx"},
	},
	{
		id: "stripe-key", keywords: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"},
		pattern: `\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9+/=]{24,}`,
		back:    1, fwd: 300,
		tp: []string{"sk_live_0123456789abcdefABCDEF", "rk_test_abcdefghij0123456789", "whsec_I8x4ices032exiN93BdoUUN5bP4tin7N"},
		fp: []string{"the sk_live_ prefix"},
	},
	{
		id: "telegram-bot-token", keywords: []string{":aa"},
		pattern: `\d{5,16}:AA[A-Za-z0-9_\-]{30,40}\b`,
		back:    17, fwd: 300,
		tp: []string{"9510860496:AAkbfMTt6E7OpVjKCSB6-HMGImW2dlwCq0U"},
		fp: []string{"at 12:AA"},
	},
	{
		id: "twilio-key", keywords: []string{"SK"},
		exact: true, near: hexAfter(2, 32),
		pattern: `\bSK[0-9a-fA-F]{32}\b`,
		back:    1, fwd: 300,
		tp: []string{"SKb026809bb94e39862b259e0227886a0f"},
		fp: []string{"SKIP this", "task"},
	},
	{
		id: "vault-token", keywords: []string{"hvs.", "hvb.", "s."},
		pattern: `\bhv[sb]\.[\w\-]{24,}|\bs\.[A-Za-z0-9]{24}\b`,
		back:    1, fwd: 300,
		check: vaultLike,
		tp:    []string{"hvs.CAESIAbcdefghijklmnopqrstuvwxyz012", "hvb.Hpe7_IEjmzlUmC9MOe8iBIFJMPWlw2k0q4l8dQiYZPuQ13XLQNhHKlBKslQe8MvqxTCUkrmXgbr4YeEPCWz49kOkaZHM6lLixn6_4oxsGJBn0Eyat9nZPiuaOkKF0vFKahEuDQ3fiD9b", "s.rw2xCqOUuzm0zzRCtmklPa0F"},
		fp:    []string{"items.length", "this.isAVeryLongIdentifierName"},
	},
	{
		id: "yandex-token", keywords: []string{"t1.", "aqvn"},
		pattern: `\bt1\.[A-Za-z0-9_\-]+={0,2}\.[A-Za-z0-9_\-]{80,}={0,2}|\bAQVN[A-Za-z0-9_\-]{32,40}`,
		back:    1, fwd: 300,
		tp: []string{"t1.fdhLlNhk8nSfRAj3Q27g.jt_oKo7flHbLKIlz7Og5jQI2ck-uOrQqqEPAK1pJwDkMZUrgekmIQeDRHl_T4zOmfR482EF-YhkgMfihjn5n9M", "AQVNftcevYn-dhdwBVYbtRFw2toefu1JwtN-Qq3b"},
		fp: []string{"t1.x"},
	},
	{
		id: "discord-bot-token", keywords: []string{"MT", "Mj", "Mz", "MD", "NT", "Nj", "Nz", "ND", "OT", "Oj", "Oz", "OD"},
		exact: true, near: dotAfter(23, 28),
		pattern: `\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}\b`,
		back:    1, fwd: 300,
		tp: []string{"MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB", "ODk1ThPD9npS0qUfViUduy6x.jsDx6Z.CHN1VdtfYpRmPkmNe_oyMbO6GW28w2qF8tO_4E"},
		fp: []string{"MTU is 1500", "NDA.signed.today"},
	},
	{
		id: "sk-token", keywords: []string{"sk-"},
		pattern: `\bsk-[A-Za-z0-9_\-]{20,}`,
		back:    1, fwd: 300,
		check: hasDigit,
		tp:    []string{"OPENAI_API_KEY sk-proj-AbCdEf0123456789AbCdEf0123456789AbCd", "sk-ant-api03-g5yShk4VvIFL4ZM82uLP_sUlQUx06JoGx-tCu6qMSaNo6POr51Ae6L_8ZrjCFNsk5YFS7lZUU_rN8MNhFhSogpbD-Cp7pAA", "sk-0123456789abcdefghijT3BlbkFJ0123456789abcdefghij", "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"},
		fp:    []string{"task-list-is-long-enough-here", "the sk-learning-rate-scheduler-option"},
	},
	{
		id: "ai-provider-key", keywords: []string{"gsk_", "xai-", "r8_", "csk-", "nvapi-", "fw_"},
		pattern: `\bgsk_[A-Za-z0-9]{40,}|\bxai-[A-Za-z0-9]{60,}|\br8_[A-Za-z0-9]{30,}|\bcsk-[a-z0-9]{40,}|\bnvapi-[A-Za-z0-9_\-]{50,}|\bfw_[A-Za-z0-9]{20,}`,
		back:    1, fwd: 300,
		tp: []string{"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", "xai-STY5NBMiGA10f2WoEHVZKskKMSB1WImLWAY7iH21eYliWPD1Px3rIkceWlWGoJ8RFGYUQakq8tGSOI0R", "r8_fMVsxGQUPDPorA3gQK9RlKabRrscH7J0nsW5o", "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"},
		fp: []string{"gsk_short", "r8_x"},
	},
	{
		id: "google-oauth", keywords: []string{"gocspx-", "ya29."},
		pattern: `\bGOCSPX-[A-Za-z0-9_\-]{24,32}|\bya29\.[A-Za-z0-9_\-]{20,}`,
		back:    1, fwd: 300,
		tp: []string{"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", "ya29.a0AfH6SMBabcdefghijklmnop"},
		fp: []string{"ya29.x"},
	},
	{
		id: "prefixed-key", keywords: []string{"nfp_", "tfp_", "oy2", "figd_"},
		pattern: `\bnfp_[A-Za-z0-9]{36,44}|\btfp_[A-Za-z0-9_\-.=]{40,}|\boy2[a-z0-9]{40,46}|\bfigd_[A-Za-z0-9_\-]{36,44}`,
		back:    1, fwd: 300,
		tp: []string{"nfp_qiZ2U6X4c5k1g36o4PE9nFbzU6G9bRtXWS6Y", "tfp_zM7KY46EuWiHMdWr8F2WjBvxyFmj7rdaLh7gZLUrtfMq4rnzHxCS938TU9q", "oy2hfau7arp7epfecsglpfdywjuyhigkjvc76q3xo8u60a", "figd_xih8Osrx-ltBUd4eLta6cGL_je7NKvZzUuARZl8u"},
		fp: []string{"tfp_x", "figd_x"},
	},
	{
		id: "lob-key", keywords: []string{"live_", "test_"},
		pattern: `\b(?:live|test)(?:_pub)?_[a-f0-9]{31,35}\b`,
		back:    1, fwd: 300,
		tp: []string{"live_fbfabb72d2ecf7900fd9473ce3e59d8634d", "test_pub_a1fe865f707ba066e41fdf0ee8f2a7d"},
		fp: []string{"test_parse_args", "live_reload"},
	},
	{
		id: "plaid-token", keywords: []string{"access-sandbox-", "access-development-", "access-production-"},
		pattern: `\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`,
		back:    1, fwd: 300,
		tp: []string{"access-sandbox-8a79831e-414d-7c6e-f40a-39c2380c604f"},
		fp: []string{"access-sandbox-docs"},
	},
	{
		id: "defined-networking-key", keywords: []string{"dnkey-"},
		pattern: `\bdnkey-[A-Za-z0-9=_\-]{26}-[A-Za-z0-9=_\-]{52}`,
		back:    1, fwd: 300,
		tp: []string{"dnkey-aP6r2fqSDmnUgYj_6yW84-AI6o-AyfHyRC7velgGXvUdhe8O0Th4jWf9dsBXGg8WMCNnHyCb5hVuQ0c"},
		fp: []string{"dnkey-x"},
	},
	{
		id: "discord-webhook", keywords: []string{"discord.com/api", "discordapp.com/api"},
		pattern: `(?i)(?:\bhttps?://)?\b(?:[a-z]+\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{5,30}/([A-Za-z0-9_\-]{30,})`,
		back:    40, fwd: 300,
		groups: []int{1},
		tp: []string{"https://discord.com/api/webhooks/1398104973841831610/c3OPVYD1MGex0UoGl6ghp-cU7np4EPg5IRhLOXgJVK4Tz", "https://canary.discordapp.com/api/v10/webhooks/12345678/Hc2Vb8Nn4Mm6Ll0Kk2Jj4Hh6Gg8Ff0Dd2Ss4",
			"hook: discord.com/api/webhooks/998877665544/Rk2Vb8Nn4Mm6Ll0Kk2Jj4Hh6Gg8Ff0Dd2Ss4 (no scheme)"},
		fp: []string{"https://discord.com/api/oauth2/authorize", "https://discord.com/channels/1170455123987654321/1170455123987654322"},
	},
	{
		id: "okta-ssws", keywords: []string{"ssws"},
		pattern: `(?i)\bssws\s+([A-Za-z0-9_\-=]{20,})`,
		back:    1, fwd: 120,
		groups: []int{1},
		check:  tokenLike,
		tp:     []string{"Authorization: SSWS 003VrMKeNP_xLVaPvZk4a8P88_lnVnoDcbeiCtqpi9", "authorization: ssws 00pL4kJ7hG2fD9sA6qW3eR8tY1uI5oP0zX7cV4bN2m"},
		fp:     []string{"Authorization: SSWS {api_token}", "the SSWS scheme"},
	},
	{
		id: "twilio-auth-token", keywords: []string{"AC"}, exact: true, near: hexAfter(2, 32),
		// An account SID and, within the next few lines, a 32-hex token
		// of its own (the auth token): Client("AC...", "<hex>"), or a
		// second variable whatever its name.
		scan: scanTwilioToken,
		tp: []string{`Client("ACb2cb54c4ead94c2855306776fb743b03", "2e7f3c3acb391d66cd2e085de07a0689")`, "twilio('ACd920c0c76f8634d0631cbfa89e1cde27',\n  'b18f0649ab2e1fc165e766977fd27126')",
			"sid = \"AC0f1e2d3c4b5a69788796a5b4c3d2e1f0\"\ntk = \"9c1d4e7f2a5b8c3d6e9f0a1b2c3d4e5f\""},
		fp: []string{"account ACb2cb54c4ead94c2855306776fb743b03 sent SM9f8e7d6c5b4a39281706f5e4d3c2b1a0", "ACCESS"},
	},
	{
		id: "google-refresh-token", keywords: []string{"1//0"},
		pattern: `\b1//0[0-9A-Za-z_\-]{40,}`,
		back:    1, fwd: 300,
		tp: []string{"refresh_token=1//0gLk8Qx2vN7tR4pW9mZ3cY6hJ1dF5sGaE2uB4oI7lK0nM8qX3zV"},
		fp: []string{"see 1//0 in the docs"},
	},
	{
		id: "oauth-refresh-token", keywords: []string{"rt_"},
		pattern: `\brt_[A-Za-z0-9_\-]{30,}`,
		back:    1, fwd: 300,
		check: randomLike,
		tp:    []string{"refresh with rt_9UQhD_-3QCUBkrFsC-uLlWPnA5rwSFR6TVKzjf8I now"},
		fp:    []string{"the rt_ prefix", "rt_sigprocmask_and_rt_sigreturn_syscalls"},
	},
	{
		id: "putty-private-key", keywords: []string{"private-lines:"},
		scan: scanPuttyPrivate,
		tp:   []string{"Private-Lines: 1\nbXs7h7mbbO9UBEwdREcKEjYOxDzwld4M3w/S/OtsjWYq\nPrivate-MAC: 0c9b"},
		fp:   []string{"Private-Lines: none", "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5"},
	},
	{
		id: "putty-private-mac", keywords: []string{"private-mac:", "private-hash:"},
		pattern: `(?i)\bprivate-(?:mac|hash):[ \t]*([0-9a-f]{32,})`,
		back:    1, fwd: 200,
		groups: []int{1},
		tp:     []string{"Private-MAC: daf9ebfcbfe0bec36041c7ac7abdac9a5340a7f324d18b108de6549eb8c0bf88"},
		fp:     []string{"Private-MAC: see below"},
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

// hexAfter vets a keyword hit of length k followed by n hex digits.
func hexAfter(k, n int) func(string, int) bool {
	return func(s string, i int) bool {
		return i+k+n <= len(s) && hexOnly(s[i+k:i+k+n], n)
	}
}

// dotAfter vets a keyword hit that starts a run of token bytes reaching a
// '.' between lo and hi bytes on (a Discord bot token's first part).
func dotAfter(lo, hi int) func(string, int) bool {
	return func(s string, i int) bool {
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

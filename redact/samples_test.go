package redact

// ruleSamples are every rule's samples, by rule id (after gitleaks): true
// positives the rule alone redacts and false positives the whole
// pipeline leaves intact, checked by TestRules. They are kept here, beside
// the tests, rather than in the rule tables: the tables are data in every
// aep-hook process, and the runtime builds the garbage collector's map of
// all such data at each start (the samples cost a hook about 30k
// instructions).
var ruleSamples = map[string]struct{ tp, fp []string }{
	"pem-block": {
		tp: []string{
			"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
			`{"key":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"}`,
			"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
			"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAAi4AAAA3aWYtbW9kbnttc2\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
		},
		fp: []string{"----- begin here -----", "the BEGIN marker",
			"-----BEGIN CERTIFICATE-----\nMIIBlzCCAT2gAwIBAgIUPPswo3djqqhCxwGq66ECV66DiLow\n-----END CERTIFICATE-----",
			"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEz0R8t\n-----END PUBLIC KEY-----"},
	},
	"jwt": {
		tp: []string{
			"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			"token=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		},
		fp: []string{"eyJhbGciOiJIUzI1NiJ9 alone", "eyJ.x.y"},
	},
	"jwt-base64": {
		tp: []string{"ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4SW4wLmMybG4="},
		fp: []string{"ZXlKshort"},
	},
	"bearer": {
		tp: []string{"Authorization: Bearer abc123def456ghi789", "curl -H 'authorization: bearer 0123456789abcdefghij'"},
		fp: []string{"the bearer of good news", "Bearer authentication is described in RFC 6750"},
	},
	"basic-auth": {
		tp: []string{"Authorization: Basic dXNlcjpwYXNzd29yZA==", `git -c http.extraHeader="AUTHORIZATION: basic eDpnaHBfYWJj" clone`},
		fp: []string{"basic authentication works", "a basic example"},
	},
	"url-credentials": {
		tp: []string{"postgres://admin:s3cr3t@db.internal:5432/app", "https://user:hunter2@example.com/x", "redis://:p4ss@cache:6379",
			"git clone https://x-access-token:abc123def456@github.com/o/r.git", "https://svc:Vq3#mZ8p@mcp.internal:8443/sse",
			"git clone https://0123456789abcdef0123456789abcdef01234567@github.com/o/r.git", "mcp__db_https://admin:Pw0rd-77@db.example__query"},
		fp: []string{"https://example.com:8443/path", "git@github.com:org/repo.git", "http://localhost:3000/@user",
			"ssh://git@github.com/o/r.git", "https://docs.example.com/@scope/pkg", "http://[::1]:8080/x"},
	},
	"credential-assignment": {
		tp: []string{
			"password=hunter2", `"password": "correct horse battery"`, "export API_KEY=abc123",
			`aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, "X-Api-Key: 0123456789",
			`client_secret: "abc def"`, `{\"token\": \"tok_123\"}`, "Server=db;User Id=sa;Password=Pa55word;",
			"secret: s3", "api-key=k1", "db_pass: p4ss", "opts = {token => 'abc'}",
			"MY_SERVICE_CRED=9f2c4e6a8b0d1f3e5a7c", "DB_PWD=Tr0ub4dor", "GH_PAT=abc123xyz", "SECRET_KEY_BASE=5f0e3a9c2b7d",
			"cache_key = 3f786850e387550fdab836ed7e6dc881de23001b", `var apiToken string = "k8s-t0ken-v4lue"`,
			`System.setProperty("API_TOKEN", "d4f7a1b2c3")`, "PASSWORD :::= s3cr3tv4l", "<password>hunter2</password>",
			"API_KEY=\n  sk9f8e7d6c5b4a3", "password: |\n  hunter2", `mySecretString=Zf3D0LXCM3EIMb`,
			"data:\n  token: UVdFUlRZVUlPUGFzZGZnaGprbA==", "password: !!str Hunt3r2x", "seed: pulse orbit lemon cradle fossil tunnel vivid amber canoe relax width grape",
		},
		fp: []string{
			"max_tokens: 4096", "tokenizer=cl100k_base", "the secret to fast builds", "token_type: bearer",
			"secret_name: prod-db", `"key": "attention.*"`, "password_file=/etc/pw.txt",
			"Authorization: Bearer", "password: [REDACTED:secret]", "bypass: true", "if token == nil {",
			"password:\n  next: 1", "token: string;", "password = os.environ", "token = get_token()",
			"API_KEY=$API_KEY", "password: ${{ secrets.DB_PASSWORD }}", "PWD=/srv/x", "api_version: 2024-10-01",
			"token_count = 123456789012", "key: value", "password = password", `auth_mode = "oauth2"`,
			"const token = await getToken();", "secret = new SecretClient(vaultUrl)", "seed: 42",
			"seed: the staging database with fixtures before the integration tests run",
			`export const SECRET_HEADER = "X-Hub-Signature-256";`, "image: ghcr.io/acme/api:2026.12.1-7f3c9e2",
			"password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231336162386435",
		},
	},
	"credential-flag": {
		tp: []string{
			"mysql --password hunter2", "gh auth login --with-token tok123", "cli --api-key=abc", `run "--token" x1`,
			"keytool -storepass chang3it -keypass k3ypass", "influx -password s3cr3t",
		},
		fp: []string{"--max-tokens 4096", "--token-file ./t.txt", "--password-stdin registry.io", "--no-auth --verbose", "pre-auth hook"},
	},
	"name-value-pair": {
		tp: []string{
			"- name: DB_PASSWORD\n  value: hunter2", `{"name": "API_TOKEN", "value": "abc123"}`,
			`<add key="ClearTextPassword" value="s3cr3t!" />`,
		},
		fp: []string{"- name: LOG_LEVEL\n  value: debug", `{"name": "token_count", "value": "12"}`},
	},
	"netrc": {
		tp: []string{
			"machine api.example.com login me password VALUE6", "machine h\n  login bob\n  password p4ss w",
			"default login anonymous password guest123",
		},
		fp: []string{"enter the login password here", "password reset machine"},
	},
	"pgpass": {
		tp: []string{"db.example.com:5432:app:admin:s3cr3tPW", "echo 'localhost:*:*:postgres:pg_pw1' >> ~/.pgpass"},
		fp: []string{"time 10:15:04:221", "listen 0.0.0.0:5432"},
	},
	"kubernetes-secret-data": {
		tp: []string{
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMg==\n  user: YWRtaW4=\n",
			"kind: Secret\nstringData:\n  config.json: '{\"a\":1}'\n  url: postgres://x\n",
		},
		fp: []string{"kind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"},
	},
	"prose-credential": {
		tp: []string{
			"the root password is Wq8!zT3#pL and sudo works", "my passphrase is harbor-lime-77",
			"the key is AWiLMV5PhzRkG0JFR4bjauImjyvyuS5kQ5", "The signing secret is 3c9f1e7a5b2d8046c1e9a7f3b5d20864",
			"the password I set was \"Blue#Heron77\"", "new password Kd9#xQ2mV4", "# the key is\nZx9Lm2Qw8Er4Ty7Ui1Op5As3Df6Gh0Jk9Lz2Xc8V",
			"set the token to Pq7Wm3Kx9Zt1Lv5Nb8Rc2Yd6 now", "Use this API key (keep it private): kR2pL8xQ4wZ6tN0mB3cV",
			"login for the router is admin / S3cure!pw2026", "the verification code is 482913x",
			"Hunter2!x is my new password", "'Qv8#Lm3zTx' was the old wifi password",
			"set the secret key for the app to dj-x8#k2!m9q@v4w7z1b5 first", "login with admin / h7Kw!2pQ on staging",
			"- staging admin password - Orange&Lime42", "here's my key Tz4Wc6Yd1Fh5Jg0Rx8As3Df7Gh2Kq",
			"the vpn pass for tonight is Gs8#Lq2mWx7",
		},
		fp: []string{
			"The key is to cache the module downloads.", "the password is required", "the secret is consistency",
			"The token is valid for 3600 seconds", "your password is incorrect", "the passphrase is empty",
			"the key is missing from the map", "the exit code is 1", "primary key is user_id",
			"the password reset flow", "Enter passphrase for key '/srv/k':", "a keyboard and a tokenizer",
			"the key to success is practice", "the token is stored in the keychain",
			"Consistency is the key to success.", "That is my password.", "v1.2.3 is the current key",
			"the key eventBusSubscriberRegistry2024 is the bean name", "the pass rate is 98.5% on main",
			"a second pass over the AST resolves the imports", "token 01JX9YB3P4T9ZK3V8Q2W6E5R7T expired",
			"set the token for the job to expire hourly", "login with your SSO account / or a passkey",
			"the key - a random string - goes here", "password — required",
		},
	},
	"question-answer-token": {
		tp: []string{
			"Which token should I use?\n0ZX2rNI0lsbvhE5XMEkIHzzqffIORByrOq", "Here you go:\nRb4Tn8Vc2Xz6Lm0Qp3Ws7Ed1Rf5Tg9Yh3Uj",
			"Auth: the new one:\nWq3Er7Ty1Ui5Op9As3Df7Gh1Jk5Lz9Xc3Vb",
		},
		fp: []string{
			"ca_bundle:\n  LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM", "  data:\nZXlKMGFHVnRaU0k2SW1SaGNtc2lmUT09",
			"What should the token be named?\nci-deploy-token-2026", "The new tag:\nrelease_2026_03",
			"Release: the new tag:\nv2.14.0-rc.3", "Which branch should I use?\nfeature/PaymentGatewayV2Refactor2026", "Commit: the fix landed in:\n3f786850e387550fdab836ed7e6dc881de23001b",
			"Which commit?\n3f786850e387550fdab836ed7e6dc881de23001b", "Which request?\n7c9e6679-7425-40de-944b-e07fc1f90ae7",
			"Which event?\n01JX9YB3P4T9ZK3V8Q2W6E5R7T", "Where?\n/etc/nginx/sites-available/default.conf",
			"Which image?\nsha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		},
	},
	"secret-file-output": {
		tp: []string{
			"$ cat config/master.key\n246b56c06b02803ca9708043bdd1fd2d", "$ cat ~/.ansible/.vault_pass\nharbor mosaic 88",
			"head -1 secrets/ci_token.txt\n8c1f0e2d4b6a9e7c5d3b1a0f8e6d4c2b1a9f7e5d",
		},
		fp: []string{"$ cat README.md\n# title", "$ cat ~/.ssh/id_ed25519.pub\nssh-ed25519 AAAAC3Nz dev@host", "cat VERSION\n1.14.2"},
	},
	"secret-command-output": {
		tp: []string{
			"$ gh auth token\nQm9Lx2Vb8Nc4Rt6Yh1Jk5Pd0Zz", "$ vault kv get -field=password secret/db\nhunter-two-22",
			"$ openssl rand -hex 32\n3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed",
			"$ printenv STRIPE_SECRET_KEY\nrk9Lm2Nx4Pv6Rt8Bw0Yc", "$ echo $DB_PASSWORD\nWinter2026",
			"$ aws configure get aws_secret_access_key\n7CmY/uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt",
			"$ kubectl get secret api -o jsonpath='{.data.token}' | base64 -d\n8kLm2Nq4Ps6Ru8Tw0Vy2Xa4Zc6Be8Dg",
			"$ pass show work/vpn\nmy vpn pass phrase\nuser: ops",
		},
		fp: []string{
			"$ echo $HOME\n/home/dev", "$ printenv PATH\n/usr/bin:/bin", "$ gh auth status\nLogged in to github.com",
			"$ kubectl get secrets\nNAME   TYPE   DATA   AGE", "$ vault kv get secret/db\n====== Data ======",
			"echo $TOKEN_COUNT\n12", "$ echo $API_KEY\n\n$ ls",
		},
	},
	"secret-file-input": {
		tp: []string{
			"echo 'harbor-mosaic-88' > ~/.vault_pass", "printf %s Zk4Pq9Lw2Xn7 | tee secrets/api_token",
			"cat > ~/.config/app/token <<'EOF'\nQ7w3Lm9Xz2Vb8Nc4Rt6Yh1Jk5Pd0\nEOF", "tee .vault_password <<EOF\nmy long pass phrase\nEOF",
		},
		fp: []string{"echo hello > notes.txt", `echo "$TOKEN" > ~/.token`, "cat > server.pem <<EOF\n-----BEGIN CERTIFICATE-----\nMIIBlzCCAT2g\n-----END CERTIFICATE-----\nEOF"},
	},
	"cookie": {
		tp: []string{
			"curl -b 'sessionid=5mn6vkclbe2wo1p29g62exjvo0tv550u' https://x", "Cookie: sid=9f8e7d6c5b4a3928; theme=dark",
			"set-cookie: user_session=gH5jK7lZ9xC1vB3nM5qW; Path=/", `cookies={"sessionid": "p0o9i8u7y6t5r4e3w2q1"}`,
			`document.cookie = "auth=Zx8Cv7Bn6Mm5Ll4Kk3"`,
		},
		fp: []string{"Cookie: theme=dark; lang=en-US", "git checkout -b feature/cookie-banner", "curl -b cookies.txt https://x", "set-cookie: a=b; Path=/"},
	},
	"cookie-jar": {
		tp: []string{".example.com\tTRUE\t/\tTRUE\t1767225600\tsessionid\t5mn6vkclbe2wo1p29g62exjv"},
		fp: []string{".example.com\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark", "a\ttrue\tb"},
	},
	"htpasswd-b": {
		tp: []string{
			"htpasswd -b .htpasswd admin Htp4ss", "htpasswd -nb admin Htp4ss", "htpasswd -b -c /etc/h deploy Qn4#vR8s (Create the user)",
			"htpasswd -B -C 12 -b /srv/users ops Lp0-Zx7*Wq && reload",
		},
		fp: []string{"htpasswd -c .htpasswd admin", "htpasswd -v .htpasswd admin"},
	},
	"sql-password": {
		tp: []string{
			"CREATE USER 'a'@'%' IDENTIFIED BY 'Mv7#qL2\nxR9!tB';", "ALTER ROLE b WITH LOGIN PASSWORD 'Tg5kW\n2pNz8';",
			"SET PASSWORD FOR 'u'@'h' = PASSWORD('x9Y8z7')",
		},
		fp: []string{"CREATE USER 's'@'localhost' IDENTIFIED WITH auth_socket;", "password ''", "IDENTIFIED BY PASSWORD"},
	},
	"mysql-p": {
		tp: []string{"mysql -u root -pPASSWORD1 db", "mysqldump -uroot -p'hunter 2' app > a.sql", "mariadb -h db -p\"s3cr3t\""},
		fp: []string{"mysql -u root -p mydb", "mysql -P 3306 -h db"},
	},
	"sshpass": {
		tp: []string{"sshpass -p PASSWORD2 ssh host", "sshpass -p'pa ss' scp a b:"},
		fp: []string{"sshpass -f ~/.pw ssh host", "sshpass -e ssh host"},
	},
	"registry-login-p": {
		tp: []string{"docker login -u me -p PASSWORD4 reg", "helm registry login reg.io -u a -p s3cr3t", "podman login -p=tok3n quay.io"},
		fp: []string{"docker run -p 8080:80 nginx", "docker login -u me --password-stdin"},
	},
	"cloud-login-p": {
		tp: []string{"az login --service-principal -u app -p S3cr3t --tenant t", "oc login -u dev -p d3vpass https://api:6443", "twine upload -u __token__ -p pypi-x1 dist/*"},
		fp: []string{"az login --identity", "az login -p -u x"},
	},
	"db-client-p": {
		tp: []string{"mongosh -u admin -p Adm1nPass --authenticationDatabase admin", "cqlsh -u cassandra -p c4ss host"},
		fp: []string{"mongosh -u admin -p --authenticationDatabase admin"},
	},
	"upper-P": {
		tp: []string{"sqlcmd -S db -U sa -P 'Yuk0n!' -Q 'select 1'", "zip -P zippass out.zip f", "mosquitto_pub -u u -P mqttpw -t t"},
		fp: []string{"zip -r out.zip dir", "sqlcmd -S db -E"},
	},
	"7z-p": {
		tp: []string{"7z a -pS3v3nZ arc.7z f"},
		fp: []string{"7z a -mx9 arc.7z f"},
	},
	"redis-cli-a": {
		tp: []string{"redis-cli -h cache -a r3disPW ping"},
		fp: []string{"redis-cli -h cache ping"},
	},
	"ldap-w": {
		tp: []string{"ldapsearch -x -D cn=admin -w LdapPw1 -b dc=x"},
		fp: []string{"ldapsearch -x -W -b dc=x"},
	},
	"snmp-auth": {
		tp: []string{"snmpwalk -v3 -u u -A authPass1 -X privPass1 host"},
		fp: []string{"snmpwalk -v2c host"},
	},
	"ssh-keygen-passphrase": {
		tp: []string{`ssh-keygen -t ed25519 -N "my phrase" -f k`},
		fp: []string{`ssh-keygen -t ed25519 -N "" -f k`},
	},
	"openssl-k": {
		tp: []string{"openssl enc -aes-256-cbc -k encPass1 -in f"},
		fp: []string{"openssl enc -d -in f"},
	},
	"doctl-t": {
		tp: []string{"doctl auth init -t d0tok3n"},
		fp: []string{"doctl compute droplet list"},
	},
	"smb-user-percent": {
		tp: []string{"smbclient //h/s -U alice%Sm8pass"},
		fp: []string{"smbclient //h/s -U alice"},
	},
	"lftp-user-comma": {
		tp: []string{"lftp -u bob,ftpP4ss sftp://h"},
		fp: []string{"lftp -u bob sftp://h"},
	},
	"http-client-user": {
		tp: []string{"curl -u admin:PASSWORD3 https://x", `curl --user "ci:t0k en" https://x`, "http -a bob:p4ss GET example.org", "curl -uadmin:pw1234 x"},
		fp: []string{"curl -u admin https://x", "curl -X POST https://x"},
	},
	"echo-to-stdin": {
		tp: []string{"echo hunter2 | docker login -u me --password-stdin", `echo -n "gh0_tok" | gh auth login --with-token`, "echo 'root:r00tpw' | chpasswd", `printf '\x50\x34\x73' | sudo -S systemctl restart app`},
		fp: []string{`echo "$PW" | docker login --password-stdin`, "cat pw.txt | docker login --password-stdin"},
	},
	"here-string-stdin": {
		tp: []string{"gh auth login --with-token <<< 'tok3nvalue'", "sudo -S <<< 'Sud0&pw' apt-get update"},
		fp: []string{`docker login --password-stdin <<< "$PW"`, `sudo tee /etc/motd <<< "welcome"`},
	},
	"expect-send-password": {
		tp: []string{`expect -c 'spawn ssh root@h; expect "password:"; send "Exp3ct&pw\r"; interact'`, "expect \"Password: \"\nsend \"Exp3ctPw2\\r\""},
		fp: []string{`expect "password:"; send "$env(PW)\r"`, `expect "login:"; send "admin\r"`},
	},
	"powershell-securestring": {
		tp: []string{`$pw = ConvertTo-SecureString "P0wer&Shell" -AsPlainText -Force`},
		fp: []string{`ConvertTo-SecureString $env:PW -AsPlainText -Force`, `ConvertTo-SecureString "$pw" -AsPlainText`},
	},
	"openssl-passwd": {
		tp: []string{`useradd -p "$(openssl passwd -1 'Hash&me9')" deploy`, "openssl passwd -6 -salt x1 Pl4inPw"},
		fp: []string{"openssl passwd -6 -stdin < pw.txt", `openssl passwd -1 "$PW"`},
	},
	"openssl-pass-arg": {
		tp: []string{"openssl pkcs12 -export -passout pass:Exp0rt -in c", "openssl rsa -passin 'pass:in pw'"},
		fp: []string{"bypass: true", "pass:"},
	},
	"positional-login": {
		tp: []string{"vault login s.AbCdEf0123456789xyz", "cargo login cio0123456789abcdef", "wpa_passphrase HomeNet wifiPass1", "rabbitmqctl add_user app Rabb1tPw"},
		fp: []string{"vault login -method=oidc", "cargo login --registry=x"},
	},
	"oracle-user-slash": {
		tp: []string{"sqlplus scott/T1ger@orcl", "expdp system/Manag3r directory=d"},
		fp: []string{"sqlplus /nolog", "sqlplus -s @script.sql"},
	},
	"net-use": {
		tp: []string{`net use \\srv\share NetPw1 /user:DOM\bob`, "net user svc Svc!pw1 /add"},
		fp: []string{`net use \\srv\share /user:DOM\bob`, "net user svc * /add"},
	},
	"nmcli-psk": {
		tp: []string{"nmcli dev wifi connect Home password wifiPw12"},
		fp: []string{"nmcli dev wifi list"},
	},
	"config-set": {
		tp: []string{
			"aws configure set aws_secret_access_key VALUE5xyz", "npm config set //registry.npmjs.org/:_authToken npmTok3n",
			"git config --global github.token gh0tok", "poetry config pypi-token.pypi pypi-AgEx", "yarn config set npmAuthToken yTok",
		},
		fp: []string{"aws configure set region eu-west-1", "git config --global user.name Bob", "npm config set registry https://r.io"},
	},
	"secrets-set": {
		tp: []string{
			"gh secret set DEPLOY_KEY --body 'k3y v'", "fly secrets set DATABASE_URL=pgx1 OTHER=o2", "heroku config:set STRIPE=sk9x -a app",
			"doppler secrets set API s3cr3tval", "netlify env:set FOO barv4l",
		},
		fp: []string{"gh secret set DEPLOY_KEY < key.txt", "gh secret list"},
	},
	"kubectl-from-literal": {
		tp: []string{"kubectl create secret generic db --from-literal=password=Kub3pw --from-literal=user=admin"},
		fp: []string{"kubectl create configmap c --from-literal=color=blue"},
	},
	"1password": {
		tp: []string{"A3-IRYL7P-GVZEIM52T2V-KY04J-0O59U-PQI7X", "ops_eyJxP/KZ5zanPBk6DOq3CeblX+z1B34F5DCacVoPSlnwZDA9tOZjwSHjKBZeZKBMRGGVzS6w6c41rYuyrH7Oi4gBOmOc0VXlNQVn+ui2cn0k6Kx25LuD3FDU5WRwBZb/N+GYq8Z05K1I0+qCSYWqkT1Q+q/z1x94oHjWex3Ncfqqr97UmDB+Z4p"},
		fp: []string{"A3-ABC", "ops_eyJshort"},
	},
	"adobe-client-secret": {
		tp: []string{"p8e-nmO0qFQEkXxkOPYOliEjZZg0QItsAh1K", "p8e-hjsrggSuyt5dRrzzvjiqbzE27svm8k"},
		fp: []string{"p8e-short"},
	},
	"age-secret-key": {
		tp: []string{"AGE-SECRET-KEY-16NCY8MU1CSTTYWUXJCHJMJCZ03CBAONQWSJG1C0PLN14M3NSK26M5TVW9V"},
		fp: []string{"AGE-SECRET-KEY-1SHORT"},
	},
	"airtable-pat": {
		tp: []string{"pat8Vs0uL1Jc3HX5q.dea75f874e00728f6e3fc4deb67bb797ff023b341d6370227af4aef49b95700d"},
		fp: []string{"path.to.file", "pattern.match"},
	},
	"alibaba-access-key-id": {
		tp: []string{"LTAIIKChzKqgqKDLIVSMyr7G", "LTAI5fLud6UL9sjKws0N"},
		fp: []string{"LTAI-short"},
	},
	"artifactory": {
		tp: []string{"AKCp9ukMLd4Bp36dNhal3P0RRX5Akim9tHtueATskkRKK5JRoPjRCwyo5V2fkzDaYAR3EeJ4a", "cmVmdxhT6Ixs3zzS0bwVd47GaQtDltd6eD76zkuXNjT1WJakBcriWMLvNy0X3d0h"},
		fp: []string{"AKCp-short"},
	},
	"atlassian-api-token": {
		tp: []string{"ATATT3dm5XNhXIqWXXupyMKAdVt__KTZ8D0xqCALg2sMEFo8si3s_yjUAvJRUfeXOZcJ83zTNaxzIzP-CbLQ3e8Oze4Aq0JLX1UyhNWcR92ddA7DSwSO4g8kheqzIkYSmvrcrkNSm3HE9NPz64bXuNhDi64LouyivailtDvsfpcZfjFiBdFKbJv0bWWd741x"},
		fp: []string{"ATATT3short"},
	},
	"authress-access-key": {
		tp: []string{"authress_mc6ciitxh49h.jyy6z.acc_ghqeqxdabqughf5s.mUTlE6nHTvKFyNpKcPt5jSktWtHUXwFfGPcWTkMyYiRiV73k"},
		fp: []string{"sc_x.acc_y"},
	},
	"aws-access-key-id": {
		tp: []string{"AKIAIOSFODNN7EXAMPLE", "id=ASIAY34FZKBOKMUTVV7A;", "AKIACAB8704YHWCG15QA5H"},
		fp: []string{"AKIA-short", "akiaiosfodnn7example"},
	},
	"aws-bedrock-api-key": {
		tp: []string{"ABSKih23+hgTpjxrla8HgvAJn8D27sJtpkz9b8JqOvBXvR+HlVZHbLn56J4fZzOpQ2Xj1/+mrOwM/3U/KntIymxQOW4XrSrZ2IpyhU3G3DTyG+s9J8o5mkMx25DlY+CevSX1fc8A", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tpXiv7rTBjvFVUwYG2fN6J4SRPNlTZbnTTtVVKv5P"},
		fp: []string{"ABSK-short"},
	},
	"azure-ad-client-secret": {
		tp: []string{"secret=K2E8Q~YA2uo26XAn1fCWXP1wgdB2wApZuxynMM4q"},
		fp: []string{"Q~ alone", "abc8Q~short"},
	},
	"clickhouse-cloud-key": {
		tp: []string{"4b1dSnw33mvQOLAmONLXsSSYeY3ODoIWiTBEdtra4c"},
		fp: []string{"4b1d short"},
	},
	"clojars-token": {
		tp: []string{"CLOJARS_789f9e41v0l7qabqc10hqthsajskilymvxo9v76ot1sgylbhrxwily8rsc4n"},
		fp: []string{"CLOJARS_X"},
	},
	"cloudflare-origin-ca-key": {
		tp: []string{"v1.0-bd8a8ea638348ce91858ee5b-4d889593c981c3bae91d2fadb336b3622b158afe05ddde8574d4dab94d48ebd4f551c6f121b348674f43a41b8ad72558d6044739dcfb5496025404cde3dd88521018844f8c2357574d"},
		fp: []string{"v1.0-beta"},
	},
	"databricks-token": {
		tp: []string{"dapifa7058853b3dbe7b1f5f3d473102da3b", "dapi613dbb6f7be27418793d57b6da550f6e-2"},
		fp: []string{"dapi-docs", "dapi12"},
	},
	"digitalocean-token": {
		tp: []string{"dop_v1_44b8013173f6fba7ef39e75aeca32b910aa60e8294745df135dd0b629849fc3e", "dor_v1_2fc34cb275e219627a55d644a88b421effa956a050b8a451a183809c094e8e9c"},
		fp: []string{"dop_v1_short"},
	},
	"doppler-token": {
		tp: []string{"dp.pt.FmL4M6fIL6y47NA0f4fcL67Ego8XtQkY5p0aCLbrl5B", "dp.st.upO4GfVAT4dutYbw4cOHOebgbZqolk9asQ28Lp9M"},
		fp: []string{"dp.pt.short"},
	},
	"duffel-token": {
		tp: []string{"duffel_live_-WKxqI25gePf95KBkzKoZhTf88cFNeXS7qlIP2SkZ5V"},
		fp: []string{"duffel_test_x"},
	},
	"dynatrace-token": {
		tp: []string{"dt0c01.MUNZA89ENE933BWA49BHYH8I.auv1520hXKrxUGIVXvVb5FvqY6PAOGejBTbr0jjYugAY9AZMOkZgQdbhcpqKZN8q"},
		fp: []string{"dt0c01.x.y"},
	},
	"easypost-token": {
		tp: []string{"EZAKLp1jbtdXZkUR9wymMutNfr8DC1aL3OGA7s6N41S42yipw7nH2T1D1r", "EZTKfJrFQOjjaScKfN5bSoK4R130XIW13J4mDad3BKFhTQ6eHmoukyHb1W"},
		fp: []string{"EZAKshort"},
	},
	"facebook-page-token": {
		tp: []string{"EAACch12kwj0NMtGVoH9BZZ4PzVkpufAB6yK6byn0YN0DAteDTEZ5UpOMb2YzkCz6tupw48ig4cgYoG85GzXgd4mCOwpptyuQn5k24fmZRWpmmiqAwiB0E8rC58r"},
		fp: []string{"EAACshort"},
	},
	"facebook-app-token": {
		tp: []string{"facebook token 906212591435365|tu-ZENFgQGJN2gpR4Oa7gRcE_gipJ81N", "?access_token=7485034640231343%7C2Baa64dI57XUhbN69YhVpHPw1p8B3g"},
		fp: []string{"facebook 123|abc"},
	},
	"flutterwave-key": {
		tp: []string{"FLWSECK_TEST-d72dfda8568243027255ef4b6c0d6d2b-X", "FLWSECK_TEST-2a34ade0b30c", "FLWPUBK-169c255e086d203382799eac9dcfb50d-X"},
		fp: []string{"FLWSECK_TEST-"},
	},
	"flyio-token": {
		tp: []string{"fo1_ENaIm0XeR8jz0Of2emnZrk30EkizeZzyjMH95wYjQ1y", "fm2_acYuAnBgBnX7pje8/Iy87b+Tn9NjearKH2HifRSfcwhLhWRk/r2PX3LYxxfOSu4nT70EPPKN94Jt046s810UP79q7yQcqwv7JumhhZr0IB2AKcw46GbyHx7K"},
		fp: []string{"fo1_short"},
	},
	"frameio-token": {
		tp: []string{"fio-u-dsqZ0iZj7LFFJaFyUgHq09DR9yU8574Fznps4rOPm4H-Y6nDX1mLaocyjJXuU35S"},
		fp: []string{"fio-u-short"},
	},
	"gcp-api-key": {
		tp: []string{"AIzaSyA0123456789abcdefghijklmnopqrstuv", "AIzayrDrgdp2lI_oLFNLLFq_LC75QFcrwSLXZ0W"},
		fp: []string{"AIzaShort"},
	},
	"github-token": {
		tp: []string{"ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_HzhpfBmGA7TPnfk3HSQmzF9EPRar5C", "ghs_ci3ddhGx7G6fX1THaq1DmNobgaZbAtWMD2QZ640W", "github_pat_RY3TazcrsXKH0xXvGDEtk0ZQDQRZuBjIc3pCDuvBdSsIWUvzZdlfC1hRIXT3DBPJ-GWyAV9J3D7sR1wa6w"},
		fp: []string{"ghp_short", "the ghs_ prefix"},
	},
	"gitlab-token": {
		tp: []string{"glpat-y7dJNC8r1WT8Kyievt2V", "glpat-RnuOn3XHf908FcNmyciyZh7Jm7u.01hoj6m9k", "glrt-t1_Q_2GVZsYj4WyKuYl_inl3bOF_8w", "GR1348941AqxntGQNiXkKzpNQAy6l", "_gitlab_session=fp891h9ybb0hbxwrykwsx34v2vrke94d", "glcbt-12_acJCyyEJ9SqDdguGz36r"},
		fp: []string{"glpat-short"},
	},
	"grafana-token": {
		tp: []string{"eyJrIjoiXqR3pBUkz9Yv514UCMlhHnmnfp5koVnHSBjQXOibkVpFzgvHthhKVNYJixFoCRWTWlVOwp7s", "glc_O8VLTL7VH7eeWHGAUDdeVRsK+4MNOdMCHPyUdB6A", "glsa_i6Wqat5qzOTdDaW3bvLcvTDv1OkHf00o_4b51bc9b"},
		fp: []string{"glc_short"},
	},
	"harness-token": {
		tp: []string{"pat.34BZR47O0wtTFF51LL007j.pGg6eqWcEThV899ivRkVbP8r.bkr39LcudWz2QnhVn21X"},
		fp: []string{"pat.x.y.z"},
	},
	"hashicorp-tf-token": {
		tp: []string{"29hiwuyd8yrn4e.atlasv1.KcQLkpUFcZvj-RXuIC7qCc2Bd0sNygJfNSPJ3DZWOEZgp03nE87XQl1bE18uP_DG62a"},
		fp: []string{"x.atlasv1.y"},
	},
	"heroku-token-v2": {
		tp: []string{"HRKU-AAm8JvZdKUvHbd6BAHxAyYJYtFpjRkR0zcgnZ6vF0I3zVsy3-ZgCLDSmC84t"},
		fp: []string{"HRKU-AA"},
	},
	"huggingface-token": {
		tp: []string{"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "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", "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"},
		fp: []string{"hf_short"},
	},
	"infracost-token": {
		tp: []string{"ico-Ze29heFIQiUUsZZslIRhhaGcolfL3B1h"},
		fp: []string{"ico-short"},
	},
	"intra42-secret": {
		tp: []string{"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"},
		fp: []string{"s-s4t2ud-x"},
	},
	"linear-token": {
		tp: []string{"lin_api_xUC2VSNIEeWoVPQgGLxQbDfcLWniO5cbOZba9h2l"},
		fp: []string{"lin_api_short"},
	},
	"mailchimp-key": {
		tp: []string{"b31a966d1b7a46ccb972dcd7c8c2f33d-us12"},
		fp: []string{"deadbeef-us1"},
	},
	"mailgun-key": {
		tp: []string{"key-05f5bca5653c1924e2230d0b929edf9f", "pubkey-419e91604a11dee3e3212827ab45ab2e"},
		fp: []string{"key-value store", "key-"},
	},
	"mapbox-token": {
		tp: []string{"pk.eyJulJB0j35VnNBPAhIvTrVSUmdhwKHOLoQvRKWtkAsFbkGLr4uVcQ1iUp7io2R.9dQX4pHvgsC4IfTU1tiN4w", "sk.rjvry1lf3h1pwkujw1vk8gokwgeubp1anatxe2f2we6g9hg0galvwcc47h8r.0602u12wq7q1nkywmtfo6v"},
		fp: []string{"task.run()", "pk.x"},
	},
	"maxmind-license-key": {
		tp: []string{"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"},
		fp: []string{"x_mmk"},
	},
	"teams-webhook": {
		tp: []string{"https://acme.webhook.office.com/webhookb2/66388b6e-aaaa-bbbb-cccc-bb0f684b7a1b@ec2f8c7d-1111-2222-3333-70bad126830b/IncomingWebhook/5e8b39c26e8dacf68c3d9fe3844b332d/2c49925e-4444-5555-6666-98f844de692c"},
		fp: []string{"webhook.office.com docs"},
	},
	"newrelic-key": {
		tp: []string{"NRAK-HA01R98YKWZYT7PRV1YIYRTUM3J", "NRJS-31b1d2d54036071763e", "NRII-kq8dl59br57bygtpb8gevjn9dzz0tv3w"},
		fp: []string{"NRAK-x"},
	},
	"notion-token": {
		tp: []string{"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", "secret_ZlLvW6RmuqcRWeUChoB2Adua8OHBsH304URlgq8tZ7r"},
		fp: []string{"secret_name", "ntn_1"},
	},
	"npm-token": {
		tp: []string{"npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_y6XaAmfReLwXXbNqnkX1jGGpzG1kNG27wI4Q"},
		fp: []string{"npm_config_cache"},
	},
	"octopus-deploy-key": {
		tp: []string{"API-973GBY49GPMKWTVFZWNGVWYD5U"},
		fp: []string{"API-KEY", "api-gateway-service-name-here"},
	},
	"openshift-token": {
		tp: []string{"sha256~9fhps5zPEuUGqYdWdONVIU_cMzAeDgVaOGWr5C1-U3b"},
		fp: []string{"sha256~x"},
	},
	"perplexity-key": {
		tp: []string{"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"},
		fp: []string{"pplx-short"},
	},
	"planetscale-token": {
		tp: []string{"pscale_tkn_HANLyUzWnrd6DWxT9vjKdJ7-pBFrJRR97KoRCLpLE6o", "pscale_pw_Ypn44F8l83IlrBRRUzfdEGC2poBjI2blVWU3LZAgd5p"},
		fp: []string{"pscale_tkn_x"},
	},
	"postman-key": {
		tp: []string{"PMAK-4b227d8ab47392005537683f-f72496b0213b90c7a430b2aafed8755e3c"},
		fp: []string{"PMAK-x"},
	},
	"prefect-key": {
		tp: []string{"pnu_Z75HIXUtnuFyf8JNOIGPbePQ4Emy6SnS0R1r"},
		fp: []string{"pnu_x"},
	},
	"pulumi-token": {
		tp: []string{"pul-281578b4c871adcbbab0b521966b253f4d9c4e7c"},
		fp: []string{"pul-x"},
	},
	"pypi-token": {
		tp: []string{"pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NTY3ODkw"},
		fp: []string{"pypi-AgEIcHlwaS5vcmc"},
	},
	"readme-key": {
		tp: []string{"rdme_o9e0a3d593skdaqx2tn03u6fsiv3dxyqbvqbvu4efjhdtxasmk667uat63vha5k0ox2p4n"},
		fp: []string{"rdme_x"},
	},
	"rubygems-key": {
		tp: []string{"rubygems_879cae437d17362dd9a65ce1ca2a0518b70c5c775d468d6b"},
		fp: []string{"rubygems_org"},
	},
	"scalingo-token": {
		tp: []string{"tk-us-7IbVVO5BITlObJmVGhpqbCIcaMoRz-fUODVe6gAW48VsFr7W"},
		fp: []string{"tk-us-x"},
	},
	"sendgrid-key": {
		tp: []string{"SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "SG.TJGRyTFFqrkAYZbaLzjiyDd02yOsWwjmqMY9BhlhYjJ1iTjvlXGIDyxBIWUwOIAA8e"},
		fp: []string{"SG.short.x"},
	},
	"sendinblue-key": {
		tp: []string{"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"},
		fp: []string{"xkeysib-x"},
	},
	"sentry-token": {
		tp: []string{"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", "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"},
		fp: []string{"sntryu_x"},
	},
	"settlemint-token": {
		tp: []string{"sm_pat_H1nLldXboz6FtR7P"},
		fp: []string{"sm_pat_x"},
	},
	"shippo-token": {
		tp: []string{"shippo_live_d698000c1c4cdfbbaf9e9630c27a9f7c97e0472b"},
		fp: []string{"shippo_live_x"},
	},
	"shopify-token": {
		tp: []string{"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", "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"},
		fp: []string{"shpat_x"},
	},
	"slack-token": {
		tp: []string{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xapp-1-A0123456789-0123456789012-abcdef", "xoxe.xoxp-1-cI9QlDCV4ryzmxxAVv8u6JJWfKh9NYrNly7D0d3AZeufAN8Rg0JgtKFql67yYzwUgXNLU9ug8n3FwvjGYIvYI0Pa5Bl2DwuUyXnNFa0n0evw4sAJ4SuM7VEgRaCEozfVMRvkeFrQMsZQUKV9xr2e6Yf5Z16B6D0bJC7b", "xoxe-1-zBzcTJGt5b0CLh0VAA4qra3ZMar43BSNKW3FuKHaSXwzBPxAH1QLDKJC2WetXtpstKoEVPFJgZaLuEJqLiOTOM7YBvpaJXMil2h72JEBy06qLjg6XJX5zoDeay1GQpxs9aBhAiHPBdgzkkMj8c"},
		fp: []string{"xoxb-1"},
	},
	"slack-webhook": {
		tp: []string{"https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
		fp: []string{"https://hooks.slack.com/"},
	},
	"sourcegraph-token": {
		tp: []string{"sgp_8efec93ea2e0349a_9fac5f22146abd09d66665d882767ce32b61dc9e", "sgp_54569620ebd9bd8a4e30838eae9b03b58746316b"},
		fp: []string{"sgp_x"},
	},
	"square-token": {
		tp: []string{"EAAAwCZG4egwjumaN59umbTzrI-ODaN3C_ukiqSjaxxjmBSGbYhMghiBw6qW-94M", "sq0atp-U3q5pnkw-zRQcVfUt0r78Y", "sq0csp-9Jiuw-RDwJB5kV-HLJtZ6gYHr6-uyUUa7PJ53rJ5P9f"},
		fp: []string{"EAAAx"},
	},
	"stripe-key": {
		tp: []string{"sk_live_0123456789abcdefABCDEF", "rk_test_abcdefghij0123456789", "whsec_I8x4ices032exiN93BdoUUN5bP4tin7N"},
		fp: []string{"the sk_live_ prefix"},
	},
	"telegram-bot-token": {
		tp: []string{"9510860496:AAkbfMTt6E7OpVjKCSB6-HMGImW2dlwCq0U"},
		fp: []string{"at 12:AA"},
	},
	"twilio-key": {
		tp: []string{"SKb026809bb94e39862b259e0227886a0f"},
		fp: []string{"SKIP this", "task"},
	},
	"vault-token": {
		tp: []string{"hvs.CAESIAbcdefghijklmnopqrstuvwxyz012", "hvb.Hpe7_IEjmzlUmC9MOe8iBIFJMPWlw2k0q4l8dQiYZPuQ13XLQNhHKlBKslQe8MvqxTCUkrmXgbr4YeEPCWz49kOkaZHM6lLixn6_4oxsGJBn0Eyat9nZPiuaOkKF0vFKahEuDQ3fiD9b", "s.rw2xCqOUuzm0zzRCtmklPa0F"},
		fp: []string{"items.length", "this.isAVeryLongIdentifierName"},
	},
	"yandex-token": {
		tp: []string{"t1.fdhLlNhk8nSfRAj3Q27g.jt_oKo7flHbLKIlz7Og5jQI2ck-uOrQqqEPAK1pJwDkMZUrgekmIQeDRHl_T4zOmfR482EF-YhkgMfihjn5n9M", "AQVNftcevYn-dhdwBVYbtRFw2toefu1JwtN-Qq3b"},
		fp: []string{"t1.x"},
	},
	"discord-bot-token": {
		tp: []string{"MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB", "ODk1ThPD9npS0qUfViUduy6x.jsDx6Z.CHN1VdtfYpRmPkmNe_oyMbO6GW28w2qF8tO_4E"},
		fp: []string{"MTU is 1500", "NDA.signed.today"},
	},
	"sk-token": {
		tp: []string{"OPENAI_API_KEY sk-proj-AbCdEf0123456789AbCdEf0123456789AbCd", "sk-ant-api03-g5yShk4VvIFL4ZM82uLP_sUlQUx06JoGx-tCu6qMSaNo6POr51Ae6L_8ZrjCFNsk5YFS7lZUU_rN8MNhFhSogpbD-Cp7pAA", "sk-0123456789abcdefghijT3BlbkFJ0123456789abcdefghij", "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"},
		fp: []string{"task-list-is-long-enough-here", "the sk-learning-rate-scheduler-option"},
	},
	"ai-provider-key": {
		tp: []string{"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", "xai-STY5NBMiGA10f2WoEHVZKskKMSB1WImLWAY7iH21eYliWPD1Px3rIkceWlWGoJ8RFGYUQakq8tGSOI0R", "r8_fMVsxGQUPDPorA3gQK9RlKabRrscH7J0nsW5o", "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"},
		fp: []string{"gsk_short", "r8_x"},
	},
	"google-oauth": {
		tp: []string{"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", "ya29.a0AfH6SMBabcdefghijklmnop"},
		fp: []string{"ya29.x"},
	},
	"prefixed-key": {
		tp: []string{"nfp_qiZ2U6X4c5k1g36o4PE9nFbzU6G9bRtXWS6Y", "tfp_zM7KY46EuWiHMdWr8F2WjBvxyFmj7rdaLh7gZLUrtfMq4rnzHxCS938TU9q", "oy2hfau7arp7epfecsglpfdywjuyhigkjvc76q3xo8u60a", "figd_xih8Osrx-ltBUd4eLta6cGL_je7NKvZzUuARZl8u"},
		fp: []string{"tfp_x", "figd_x"},
	},
	"lob-key": {
		tp: []string{"live_fbfabb72d2ecf7900fd9473ce3e59d8634d", "test_pub_a1fe865f707ba066e41fdf0ee8f2a7d"},
		fp: []string{"test_parse_args", "live_reload"},
	},
	"plaid-token": {
		tp: []string{"access-sandbox-8a79831e-414d-7c6e-f40a-39c2380c604f"},
		fp: []string{"access-sandbox-docs"},
	},
	"defined-networking-key": {
		tp: []string{"dnkey-aP6r2fqSDmnUgYj_6yW84-AI6o-AyfHyRC7velgGXvUdhe8O0Th4jWf9dsBXGg8WMCNnHyCb5hVuQ0c"},
		fp: []string{"dnkey-x"},
	},
	"discord-webhook": {
		tp: []string{"https://discord.com/api/webhooks/1398104973841831610/c3OPVYD1MGex0UoGl6ghp-cU7np4EPg5IRhLOXgJVK4Tz", "https://canary.discordapp.com/api/v10/webhooks/12345678/Hc2Vb8Nn4Mm6Ll0Kk2Jj4Hh6Gg8Ff0Dd2Ss4",
			"hook: discord.com/api/webhooks/998877665544/Rk2Vb8Nn4Mm6Ll0Kk2Jj4Hh6Gg8Ff0Dd2Ss4 (no scheme)"},
		fp: []string{"https://discord.com/api/oauth2/authorize", "https://discord.com/channels/1170455123987654321/1170455123987654322"},
	},
	"okta-ssws": {
		tp: []string{"Authorization: SSWS 003VrMKeNP_xLVaPvZk4a8P88_lnVnoDcbeiCtqpi9", "authorization: ssws 00pL4kJ7hG2fD9sA6qW3eR8tY1uI5oP0zX7cV4bN2m"},
		fp: []string{"Authorization: SSWS {api_token}", "the SSWS scheme"},
	},
	"twilio-auth-token": {
		tp: []string{`Client("ACb2cb54c4ead94c2855306776fb743b03", "2e7f3c3acb391d66cd2e085de07a0689")`, "twilio('ACd920c0c76f8634d0631cbfa89e1cde27',\n  'b18f0649ab2e1fc165e766977fd27126')",
			"sid = \"AC0f1e2d3c4b5a69788796a5b4c3d2e1f0\"\ntk = \"9c1d4e7f2a5b8c3d6e9f0a1b2c3d4e5f\""},
		fp: []string{"account ACb2cb54c4ead94c2855306776fb743b03 sent SM9f8e7d6c5b4a39281706f5e4d3c2b1a0", "ACCESS"},
	},
	"google-refresh-token": {
		tp: []string{"refresh_token=1//0gLk8Qx2vN7tR4pW9mZ3cY6hJ1dF5sGaE2uB4oI7lK0nM8qX3zV"},
		fp: []string{"see 1//0 in the docs"},
	},
	"oauth-refresh-token": {
		tp: []string{"refresh with rt_9UQhD_-3QCUBkrFsC-uLlWPnA5rwSFR6TVKzjf8I now"},
		fp: []string{"the rt_ prefix", "rt_sigprocmask_and_rt_sigreturn_syscalls"},
	},
	"putty-private-key": {
		tp: []string{"Private-Lines: 1\nbXs7h7mbbO9UBEwdREcKEjYOxDzwld4M3w/S/OtsjWYq\nPrivate-MAC: 0c9b"},
		fp: []string{"Private-Lines: none", "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5"},
	},
	"putty-private-mac": {
		tp: []string{"Private-MAC: daf9ebfcbfe0bec36041c7ac7abdac9a5340a7f324d18b108de6549eb8c0bf88"},
		fp: []string{"Private-MAC: see below"},
	},
	"provider-name-assignment": {
		tp: []string{
			"DISCORD=0123456789abcdef0123456789abcdef", "heroku: 01234567-89ab-cdef-0123-456789abcdef",
			"asana_client = 1234567890123456", `<discordToken>
    9d8c7b6a5f4e3d2c1b0a
</discordToken>`, `"twitter_consumer" => "AbCdEf0123456789XyZw"`,
		},
		fp: []string{"DISCORD_CHANNEL=announcements", "twitter_handle: @company", "linear_layer = nn.Linear(4, 4)", "slack_channel: #deploys"},
	},
}

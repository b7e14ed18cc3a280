// A key and a self-signed certificate for 127.0.0.1 and localhost, valid 2020 to 2120: for test
// servers only (an https flowadmin behind a forward proxy). Trusted by a child process through
// NODE_EXTRA_CA_CERTS; never by anything else.
export const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQ5sO0yHDFYPpAIWF
aFiKM9zof2jti6KJk2aDJUyy25ShRANCAAQ745yvajdHJv5zX6CpVYwB6ZkwHKcX
SX76Kz6V47/MWu1qOe6BH95s5aK6swe1Fut0uz92A6tycYRkldlJzaFP
-----END PRIVATE KEY-----
`

export const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBcTCCARegAwIBAgIBATAKBggqhkjOPQQDAjAZMRcwFQYDVQQDDA5mbG93YWRt
aW4gdGVzdDAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowGTEXMBUG
A1UEAwwOZmxvd2FkbWluIHRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQ7
45yvajdHJv5zX6CpVYwB6ZkwHKcXSX76Kz6V47/MWu1qOe6BH95s5aK6swe1Fut0
uz92A6tycYRkldlJzaFPo04wTDAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3Qw
DwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUxEYbviNgIOAcdF/duL8TJqT9FYEw
CgYIKoZIzj0EAwIDSAAwRQIhAISrrB5+A0RPiTmqxG7GEedh2dPTRkqOE5+kFPlh
RuYvAiA2UXe6ZDDF+sV5lGhQaYJCSWLnEWRLEDm/R5bzsDAWhg==
-----END CERTIFICATE-----
`

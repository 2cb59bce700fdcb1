# expect: exception
return open("/etc/passwd").read()

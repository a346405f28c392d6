module goquote

go 1.22

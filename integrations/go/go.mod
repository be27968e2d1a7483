module github.com/appleid-mock/appleid-mock/integrations/go

go 1.19

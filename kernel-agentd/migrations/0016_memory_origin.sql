-- Schema version 16: where an automatic memory's content came from when it was not the owner
-- (issue 39). `origin` is NULL for what the owner said (and for every owner's memory); otherwise
-- a label such as `tool mcp_docs__search` (a tool's result: an MCP server, a CLI's output, a
-- document read by a tool). Recall shows the label so the model never takes it for the owner's
-- word.

ALTER TABLE memories ADD COLUMN origin TEXT;

"""The offline interviewer: a deterministic model that reads the PM's words and answers in Forge's tool protocol."""

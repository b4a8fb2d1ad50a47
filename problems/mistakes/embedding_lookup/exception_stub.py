# Wrong (kind exception): not written yet.
def embedding_lookup(token_ids, embedding_matrix):
    raise NotImplementedError("TODO")

"""Reference for reshape_and_cache: the paged KV-cache write, done with indexing."""


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping):
    NB, BS, H, D = key_cache.shape
    stored = slot_mapping >= 0
    slots = slot_mapping[stored]
    key_cache.view(NB * BS, H, D)[slots] = key[stored]
    value_cache.view(NB * BS, H, D)[slots] = value[stored]

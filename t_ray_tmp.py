import time, numpy as np, pandas as pd
from pathlib import Path
from tests.core.audit.vectors_files import write_vectors_file
from core.audit.ivf import ivf_close_pairs
from core.audit.run import pair_rows
from core.audit.ray_audit import ray_audit
m, ids, texts = write_vectors_file(Path('/tmp/scale/small.parquet'), 3000)
found, rep = ivf_close_pairs(m, 0.7, cells=40, probe=4, recall_sample=0)
loc = pair_rows('vectors', texts, ids, found)
print(len(loc), loc.kind.value_counts().to_dict())
t=time.perf_counter()
r = ray_audit(Path('/tmp/scale/small.parquet'), Path('/tmp/scale/small_pairs.parquet'), 0.7, cells=40, probe=4, quiet=True)
print(time.perf_counter()-t, r)
got = pd.read_parquet('/tmp/scale/small_pairs.parquet')
print(len(got), got.columns.tolist())
L={frozenset((a,b)):(k,mo,c) for a,b,k,mo,c in loc[['id_a','id_b','kind','mode','cosine']].itertuples(index=False)}
G={frozenset((a,b)):(k,mo,c) for a,b,k,mo,c in got[['id_a','id_b','kind','mode','cosine']].itertuples(index=False)}
print('dupes', len(got)-len(G), 'same keys', L.keys()==G.keys(), 'maxdiff', max(abs(L[k][2]-G[k][2]) for k in L), 'kinds same', all(L[k][:2]==G[k][:2] for k in L))

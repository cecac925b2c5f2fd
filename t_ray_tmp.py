import time, numpy as np, pandas as pd, sys
from pathlib import Path
from tests.core.audit.vectors_files import write_vectors_file
from core.audit.ivf import ivf_close_pairs
from core.audit.run import pair_rows
from core.audit.ray_audit import ray_audit
n=int(sys.argv[1]); th=float(sys.argv[2])
m, ids, texts = write_vectors_file(Path('/tmp/scale/small.parquet'), n)
t=time.perf_counter()
found, rep = ivf_close_pairs(m, th, cells=20, probe=3, recall_sample=0)
loc = pair_rows('vectors', texts, ids, found)
print('local', time.perf_counter()-t, len(loc), loc.kind.value_counts().to_dict())
t=time.perf_counter()
r = ray_audit(Path('/tmp/scale/small.parquet'), Path('/tmp/scale/small_pairs.parquet'), th, cells=20, probe=3, quiet=True)
print(time.perf_counter()-t, r)
got = pd.read_parquet('/tmp/scale/small_pairs.parquet')
L={frozenset((a,b)):(k,mo,c) for a,b,k,mo,c in loc[['id_a','id_b','kind','mode','cosine']].itertuples(index=False)}
G={frozenset((a,b)):(k,mo,c) for a,b,k,mo,c in got[['id_a','id_b','kind','mode','cosine']].itertuples(index=False)}
print('dupes', len(got)-len(G), 'same keys', L.keys()==G.keys(), 'maxdiff', max(abs(L[k][2]-G[k][2]) for k in L), 'kinds same', all(L[k][:2]==G[k][:2] for k in L))

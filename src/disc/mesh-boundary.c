/* The boundary facets and physical groups a mesh keeps from a Gmsh file:
 * freeing them, finding a group by tag or name, and the sorted-node keys
 * that match a file's facet with a cell's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh-boundary.h"

void fea_mesh_boundary_free(fea_mesh_boundary *b) {
  if (!b) return;
  free(b->facet_nodes);
  free(b->facet_tags);
  free(b->facet_entity);
  free(b->entity_start);
  free(b->group_of);
  for (int g = 0; g < b->num_groups && b->group_name; g++) free(b->group_name[g]);
  free(b->group_name);
  free(b->group_tag);
  free(b->group_facets);
  free(b);
}

int fea_mesh_boundary_find_tag(const fea_mesh_boundary *b, int tag) {
  int lo = 0, hi = b ? b->num_groups : 0; /* group_tag ascends: binary search */
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (b->group_tag[mid] < tag)
      lo = mid + 1;
    else
      hi = mid;
  }
  return b && lo < b->num_groups && b->group_tag[lo] == tag ? lo : -1;
}

int fea_mesh_boundary_find_name(const fea_mesh_boundary *b, const char *name, int *matches) {
  int first = -1;
  *matches = 0;
  for (int g = 0; b && g < b->num_groups; g++)
    if (b->group_name[g] && strcmp(b->group_name[g], name) == 0) {
      if (first < 0) first = g;
      (*matches)++;
    }
  return first;
}

void fea_facet_key(const fea_index *nodes, int n, fea_index key[FEA_FACET_MAX_NODES]) {
  int k = 0;
  for (int i = 0; i < n; i++) { /* insertion sort: at most four nodes */
    const fea_index x = nodes[i];
    int j = k++;
    for (; j > 0 && key[j - 1] > x; j--) key[j] = key[j - 1];
    key[j] = x;
  }
  for (; k < FEA_FACET_MAX_NODES; k++) key[k] = -1;
}

int fea_facet_key_compare(const fea_index *a, const fea_index *b) {
  for (int i = 0; i < FEA_FACET_MAX_NODES; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* Users know their mesh by the file's node tags (what Gmsh shows); the
 * mesh's own numbers are positions after the unused nodes were dropped. */
void fea_mesh_boundary_format_facet(const fea_mesh_boundary *b, const fea_index *key, char *buf,
                                    size_t len) {
  const fea_index *nodes = key, *tags = NULL;
  for (fea_index f = 0; b && b->facet_tags && f < b->num_facets && !tags; f++) {
    const fea_index *fn = b->facet_nodes + f * FEA_FACET_MAX_NODES;
    int nv = 0;
    while (nv < FEA_FACET_MAX_NODES && fn[nv] >= 0) nv++;
    fea_index k[FEA_FACET_MAX_NODES];
    fea_facet_key(fn, nv, k);
    if (fea_facet_key_compare(k, key) == 0) tags = b->facet_tags + f * FEA_FACET_MAX_NODES;
  }
  if (tags) nodes = tags;
  size_t used = 0;
  buf[0] = '\0';
  for (int j = 0; j < FEA_FACET_MAX_NODES && nodes[j] >= 0 && used < len; j++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", j ? " " : "", (long long)nodes[j]);
  if (used < len)
    snprintf(buf + used, len - used, tags ? " (node tags of the file)" : " (mesh nodes, 0-based)");
}

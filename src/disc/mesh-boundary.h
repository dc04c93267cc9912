/* The boundary facets of a mesh read from Gmsh, with the physical groups
 * they belong to, which a problem's boundary parts name
 * (fea_problem_desc.parts). */
#ifndef FEA_INTERNAL_MESH_BOUNDARY_H
#define FEA_INTERNAL_MESH_BOUNDARY_H

#include <feaccel/mesh.h>

#include "mesh.h"

/* Nodes of a facet at most: a quadrilateral face of a hexahedron. */
#define FEA_FACET_MAX_NODES 4

/* The facets (elements of dimension mesh->dim - 1 in the file) and the
 * physical groups of that dimension. A facet belongs to the groups of its
 * Gmsh entity; groups are physical tags, each with an optional name. */
typedef struct fea_mesh_boundary {
  fea_index num_facets;
  fea_index *facet_nodes; /* num_facets x FEA_FACET_MAX_NODES mesh nodes, -1 past a facet's own */
  fea_index *facet_tags;  /* the same nodes as the file tags them, for messages; NULL where
                             nodes have no tags (a refined mesh's new nodes) */
  int *facet_entity;      /* num_facets: index into the entities, -1 for an entity without groups */
  int num_entities;
  int *entity_start; /* num_entities + 1: the entity's groups are group_of[start..start+1) */
  int *group_of;     /* indices into the groups */
  int num_groups;
  int *group_tag;          /* ascending physical tags */
  char **group_name;       /* the name from $PhysicalNames, or NULL */
  fea_index *group_facets; /* facets per group */
} fea_mesh_boundary;

void fea_mesh_boundary_free(fea_mesh_boundary *b);

/* The group of physical tag tag (its index), or -1. */
int fea_mesh_boundary_find_tag(const fea_mesh_boundary *b, int tag);
/* The groups named name: the index of the first, and how many have that name
 * (0: none, -1 returned). */
int fea_mesh_boundary_find_name(const fea_mesh_boundary *b, const char *name, int *matches);

/* "102 105 (node tags of the file)": the nodes of the facet whose key
 * (fea_facet_key) is key, as the file names them (its first facet of
 * that key, in the file's order), or as 0-based mesh nodes where the
 * boundary keeps no tags. Scans the facets: for messages only. */
void fea_mesh_boundary_format_facet(const fea_mesh_boundary *b, const fea_index *key, char *buf,
                                    size_t len);

/* A facet's nodes sorted ascending, -1 padded at the end: the key under
 * which a cell's facet and a file's facet are the same. */
void fea_facet_key(const fea_index *nodes, int n, fea_index key[FEA_FACET_MAX_NODES]);
int fea_facet_key_compare(const fea_index *a, const fea_index *b);

#endif

/**
 * @file feaccel.h
 * @brief Umbrella header of libfeaccel: includes every public header.
 */
#ifndef FEACCEL_H
#define FEACCEL_H

#include <feaccel/export.h>
#include <feaccel/types.h>
#include <feaccel/version.h>
#include <feaccel/context.h>
#include <feaccel/vector.h>
#include <feaccel/mesh.h>
#include <feaccel/space.h>
#include <feaccel/matrix.h>
#include <feaccel/problem.h>
#include <feaccel/solver.h>
#include <feaccel/assembly.h>
#include <feaccel/operator.h>
#include <feaccel/cost.h>
#include <feaccel/multipatch.h>

#endif /* FEACCEL_H */
